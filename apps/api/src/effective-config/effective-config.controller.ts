import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { GetProjectEffectiveConfigUseCase, GetSessionEffectiveConfigUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';

/** `GET /projects/:id/effective-config`: a spec 1 route, answered bare. */
@ApiTags('effective config')
@Envelope('bare')
@Controller('projects/:id/effective-config')
export class ProjectEffectiveConfigController {
  constructor(private readonly getConfig: GetProjectEffectiveConfigUseCase) {}

  @Get()
  async read(@CurrentActor() actor: Actor, @Param('id') projectId: string) {
    return this.getConfig.execute(actor, projectId);
  }
}

/**
 * `GET /sessions/:id/effective-config`: named by spec 1, whose routes use no `data` wrapper, so it is
 * answered bare like the Project's.
 */
@ApiTags('effective config')
@Envelope('bare')
@Controller('sessions/:id/effective-config')
export class SessionEffectiveConfigController {
  constructor(private readonly getConfig: GetSessionEffectiveConfigUseCase) {}

  @Get()
  async read(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.getConfig.execute(actor, id);
  }
}
