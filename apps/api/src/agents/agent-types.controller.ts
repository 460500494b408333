import { Body, Controller, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  agentTypeView,
  ChangeAgentTypeStatusUseCase,
  CreateAgentTypeUseCase,
  GetAgentTypeUseCase,
  ListAgentTypesUseCase,
  requireAgentTypeActor,
  UpdateAgentTypeUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { ActorRuleGuard } from '../http/actor-rule.guard';
import { CreateAgentTypeDto, UpdateAgentTypeDto } from './agents.dto';

/** Spec 1 "Agent Types" (account actors only; no data wrapper; no DELETE). */
@ApiTags('agent types')
@Envelope('bare')
@UseGuards(ActorRuleGuard(requireAgentTypeActor))
@Controller('workspaces/:id/agent-types')
export class AgentTypesController {
  constructor(
    private readonly listTypes: ListAgentTypesUseCase,
    private readonly getType: GetAgentTypeUseCase,
    private readonly createType: CreateAgentTypeUseCase,
    private readonly updateType: UpdateAgentTypeUseCase,
    private readonly changeStatus: ChangeAgentTypeStatusUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Param('id') workspaceId: string) {
    return { items: (await this.listTypes.execute(actor, workspaceId)).map(agentTypeView) };
  }

  @Get(':agent_type_id')
  async detail(
    @CurrentActor() actor: Actor,
    @Param('id') workspaceId: string,
    @Param('agent_type_id') agentTypeId: string,
  ) {
    return agentTypeView(await this.getType.execute(actor, workspaceId, agentTypeId));
  }

  @Post()
  async create(
    @CurrentActor() actor: Actor,
    @Param('id') workspaceId: string,
    @Body() body: CreateAgentTypeDto,
  ) {
    return agentTypeView(await this.createType.execute(actor, workspaceId, body));
  }

  @Patch(':agent_type_id')
  async update(
    @CurrentActor() actor: Actor,
    @Param('id') workspaceId: string,
    @Param('agent_type_id') agentTypeId: string,
    @Body() body: UpdateAgentTypeDto,
  ) {
    return agentTypeView(await this.updateType.execute(actor, workspaceId, agentTypeId, body));
  }

  @Post(':agent_type_id/disable')
  @HttpCode(200)
  async disable(
    @CurrentActor() actor: Actor,
    @Param('id') workspaceId: string,
    @Param('agent_type_id') agentTypeId: string,
  ) {
    return agentTypeView(await this.changeStatus.execute(actor, workspaceId, agentTypeId, 'disabled'));
  }

  @Post(':agent_type_id/enable')
  @HttpCode(200)
  async enable(
    @CurrentActor() actor: Actor,
    @Param('id') workspaceId: string,
    @Param('agent_type_id') agentTypeId: string,
  ) {
    return agentTypeView(await this.changeStatus.execute(actor, workspaceId, agentTypeId, 'active'));
  }
}
