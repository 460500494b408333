import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { agentJobView, CancelAgentJobUseCase, GetAgentJobUseCase, ListAgentJobsUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { ListAgentJobsQueryDto } from './agents.dto';

/** Spec 1 "Agent jobs" (no data wrapper): a flat, newest-first list, the detail, cancel. */
@ApiTags('agent jobs')
@Envelope('bare')
@Controller('projects/:id/agent-jobs')
export class AgentJobsController {
  constructor(
    private readonly listJobs: ListAgentJobsUseCase,
    private readonly getJob: GetAgentJobUseCase,
    private readonly cancelJob: CancelAgentJobUseCase,
  ) {}

  @Get()
  async list(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Query() query: ListAgentJobsQueryDto,
  ) {
    const page = await this.listJobs.execute(actor, projectId, query);
    return { items: page.items.map(agentJobView), total: page.total };
  }

  @Get(':job_id')
  async detail(@CurrentActor() actor: Actor, @Param('id') projectId: string, @Param('job_id') jobId: string) {
    return agentJobView(await this.getJob.execute(actor, projectId, jobId));
  }

  @Post(':job_id/cancel')
  @HttpCode(200)
  async cancel(@CurrentActor() actor: Actor, @Param('id') projectId: string, @Param('job_id') jobId: string) {
    return agentJobView(await this.cancelJob.execute(actor, projectId, jobId));
  }
}
