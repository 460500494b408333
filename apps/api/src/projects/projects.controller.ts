import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { GetProjectUseCase, ListProjectSessionsUseCase, ListProjectsUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import {
  ListProjectSessionsQueryDto,
  ListProjectsQueryDto,
  toProjectView,
  toSessionSummary,
} from './projects.dto';

/**
 * Spec 1 "Projects" read routes (the events routes live in events/). Spec 1 routes answer without a
 * `data` wrapper: lists are `{items, next_cursor}`, the detail is the Project itself. Non-members get
 * 404 `project_not_found`.
 */
@ApiTags('projects')
@Envelope('bare')
@Controller('projects')
export class ProjectsController {
  constructor(
    private readonly listProjects: ListProjectsUseCase,
    private readonly getProject: GetProjectUseCase,
    private readonly listProjectSessions: ListProjectSessionsUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: ListProjectsQueryDto) {
    const page = await this.listProjects.execute(actor, query);
    return { items: page.items.map((row) => toProjectView(row, row.role)), next_cursor: page.next_cursor };
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param('id') id: string) {
    const { project, role } = await this.getProject.execute(actor, id);
    return toProjectView(project, role);
  }

  @Get(':id/sessions')
  async sessions(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: ListProjectSessionsQueryDto,
  ) {
    const page = await this.listProjectSessions.execute(actor, id, query);
    return { items: page.items.map(toSessionSummary), next_cursor: page.next_cursor };
  }
}
