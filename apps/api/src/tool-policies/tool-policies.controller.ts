import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateToolPolicyUseCase,
  DeleteToolPolicyUseCase,
  GetToolPolicyUseCase,
  ListToolPoliciesUseCase,
  UpdateToolPolicyUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  CreateToolPolicyDto,
  EmptyQueryDto,
  toToolPolicyView,
  UpdateToolPolicyDto,
} from './tool-policies.dto';

/** The tool policy registry of the caller's default Workspace (docs/decisions.md "Settings"), in `{data}`. */
@ApiTags('tool policies')
@Envelope('data')
@Controller('tool-policies')
export class ToolPoliciesController {
  constructor(
    private readonly createPolicy: CreateToolPolicyUseCase,
    private readonly listPolicies: ListToolPoliciesUseCase,
    private readonly getPolicy: GetToolPolicyUseCase,
    private readonly updatePolicy: UpdateToolPolicyUseCase,
    private readonly deletePolicy: DeleteToolPolicyUseCase,
  ) {}

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateToolPolicyDto) {
    return toToolPolicyView(await this.createPolicy.execute(actor, body));
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() _query: EmptyQueryDto) {
    const items = (await this.listPolicies.execute(actor)).map(toToolPolicyView);
    return new DataList(items, { total: items.length });
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toToolPolicyView(await this.getPolicy.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: UpdateToolPolicyDto) {
    return toToolPolicyView(await this.updatePolicy.execute(actor, id, body));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.deletePolicy.execute(actor, id);
  }
}
