import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ChangeProjectStatusUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { toProjectView } from './projects.dto';

/**
 * Project archive and restore (spec 1 leaves the transition open; docs/decisions.md "Project
 * archive and restore"). Owner only; both answer 200 with the Project object, like `GET /projects/:id`.
 */
@ApiTags('projects')
@Envelope('bare')
@Controller('projects/:id')
export class ProjectLifecycleController {
  constructor(private readonly changeStatus: ChangeProjectStatusUseCase) {}

  @Post('archive')
  @HttpCode(200)
  async archive(@CurrentActor() actor: Actor, @Param('id') id: string) {
    const { project, role } = await this.changeStatus.execute(actor, id, 'archived');
    return toProjectView(project, role);
  }

  @Post('restore')
  @HttpCode(200)
  async restore(@CurrentActor() actor: Actor, @Param('id') id: string) {
    const { project, role } = await this.changeStatus.execute(actor, id, 'active');
    return toProjectView(project, role);
  }
}
