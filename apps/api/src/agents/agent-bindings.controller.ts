import { Body, Controller, Get, Headers, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import {
  agentBindingView,
  ChangeAgentBindingStatusUseCase,
  CreateAgentBindingUseCase,
  GetAgentBindingUseCase,
  ListAgentBindingsUseCase,
  RequestAgentBindingRunUseCase,
  UpdateAgentBindingUseCase,
  type AgentBindingWithType,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { CreateAgentBindingDto, RunAgentBindingDto, UpdateAgentBindingDto } from './agents.dto';

const view = ({ binding, type }: AgentBindingWithType) => agentBindingView(binding, type);

/** Spec 1 "Agent Bindings" (no data wrapper): read, manage and run an Agent Type in a Project. */
@ApiTags('agent bindings')
@Envelope('bare')
@Controller('projects/:id/agent-bindings')
export class AgentBindingsController {
  constructor(
    private readonly listBindings: ListAgentBindingsUseCase,
    private readonly getBinding: GetAgentBindingUseCase,
    private readonly createBinding: CreateAgentBindingUseCase,
    private readonly updateBinding: UpdateAgentBindingUseCase,
    private readonly changeStatus: ChangeAgentBindingStatusUseCase,
    private readonly requestRun: RequestAgentBindingRunUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Param('id') projectId: string) {
    return { items: (await this.listBindings.execute(actor, projectId)).map(view) };
  }

  @Get(':binding_id')
  async detail(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('binding_id') bindingId: string,
  ) {
    return view(await this.getBinding.execute(actor, projectId, bindingId));
  }

  @Post()
  async create(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: CreateAgentBindingDto,
  ) {
    return view(await this.createBinding.execute(actor, projectId, body));
  }

  @Patch(':binding_id')
  async update(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('binding_id') bindingId: string,
    @Body() body: UpdateAgentBindingDto,
  ) {
    return view(await this.updateBinding.execute(actor, projectId, bindingId, body));
  }

  @Post(':binding_id/disable')
  @HttpCode(200)
  async disable(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('binding_id') bindingId: string,
  ) {
    return view(await this.changeStatus.execute(actor, projectId, bindingId, 'disabled'));
  }

  @Post(':binding_id/enable')
  @HttpCode(200)
  async enable(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('binding_id') bindingId: string,
  ) {
    return view(await this.changeStatus.execute(actor, projectId, bindingId, 'enabled'));
  }

  /** 202 with the job created (or, for a repeated Idempotency-Key, the first one). */
  @Post(':binding_id/run')
  @HttpCode(202)
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1-200 characters' })
  async run(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('binding_id') bindingId: string,
    @Body() body: RunAgentBindingDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
  ) {
    return this.requestRun.execute(actor, projectId, bindingId, {
      ...body,
      idempotency_key: idempotencyKey,
    });
  }
}
