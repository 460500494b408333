import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ArchiveDerivedOutputUseCase,
  CreateDerivedOutputUseCase,
  GetDerivedOutputUseCase,
  ListDerivedOutputsUseCase,
  UpdateDerivedOutputUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import {
  CreateDerivedOutputDto,
  ListDerivedOutputsQueryDto,
  toDerivedOutputView,
  UpdateDerivedOutputDto,
} from './derived-outputs.dto';

/** Spec 1 "Derived outputs" (no data wrapper). */
@ApiTags('derived-outputs')
@Envelope('bare')
@Controller('projects/:id/derived-outputs')
export class DerivedOutputsController {
  constructor(
    private readonly listOutputs: ListDerivedOutputsUseCase,
    private readonly createOutput: CreateDerivedOutputUseCase,
    private readonly getOutput: GetDerivedOutputUseCase,
    private readonly updateOutput: UpdateDerivedOutputUseCase,
    private readonly archiveOutput: ArchiveDerivedOutputUseCase,
  ) {}

  @Get()
  async list(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Query() query: ListDerivedOutputsQueryDto,
  ) {
    const page = await this.listOutputs.execute(actor, projectId, query);
    return { items: page.items.map(toDerivedOutputView), next_cursor: page.next_cursor };
  }

  @Post()
  async create(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: CreateDerivedOutputDto,
  ) {
    return { item: toDerivedOutputView(await this.createOutput.execute(actor, projectId, body)) };
  }

  @Get(':item_id')
  async detail(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('item_id') itemId: string,
  ) {
    return { item: toDerivedOutputView(await this.getOutput.execute(actor, projectId, itemId)) };
  }

  @Patch(':item_id')
  async update(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('item_id') itemId: string,
    @Body() body: UpdateDerivedOutputDto,
  ) {
    return { item: toDerivedOutputView(await this.updateOutput.execute(actor, projectId, itemId, body)) };
  }

  /** Archives the entry; the row is kept. */
  @Delete(':item_id')
  async archive(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('item_id') itemId: string,
  ) {
    return { item: toDerivedOutputView(await this.archiveOutput.execute(actor, projectId, itemId)) };
  }
}
