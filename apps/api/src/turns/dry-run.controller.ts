import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { DryRunUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { DryRunDto } from './dry-run.dto';

/** Spec 2 `POST /sessions/:id/respond/dry-run`: `{data: <Dry-run result>}`, 200, nothing written. */
@ApiTags('chat')
@Envelope('data')
@Controller('sessions/:id/respond')
export class DryRunController {
  constructor(private readonly dryRun: DryRunUseCase) {}

  @Post('dry-run')
  @HttpCode(200)
  run(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: DryRunDto) {
    return this.dryRun.execute(actor, id, body);
  }
}
