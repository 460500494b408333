import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CreateVcTagUseCase, DeleteVcTagUseCase, GetVcTagUseCase, ListVcTagsUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import { CreateVcTagDto, toVcTagListInput, toVcTagView, VcTagListQueryDto } from './vc-tags.dto';

/** Spec 3 "VC Tags" in `{data}`: tags of the caller's account on floors and asset versions. */
@ApiTags('vc tags')
@Envelope('data')
@Controller('vc-tags')
export class VcTagsController {
  constructor(
    private readonly createTag: CreateVcTagUseCase,
    private readonly listTags: ListVcTagsUseCase,
    private readonly getTag: GetVcTagUseCase,
    private readonly deleteTag: DeleteVcTagUseCase,
  ) {}

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateVcTagDto) {
    return toVcTagView(await this.createTag.execute(actor, body));
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: VcTagListQueryDto) {
    const list = await this.listTags.execute(actor, toVcTagListInput(query));
    return new DataList(list.items.map(toVcTagView), list.meta);
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toVcTagView(await this.getTag.execute(actor, id));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.deleteTag.execute(actor, id);
  }
}
