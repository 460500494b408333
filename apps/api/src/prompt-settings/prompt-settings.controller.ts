import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  GetPromptRuntimeAssetsUseCase,
  GetPromptSettingsUseCase,
  PutPromptSettingsUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { PutPromptSettingsDto } from './prompt-settings.dto';

/**
 * Spec 2's "prompt-runtime mode and assets" routes. Mode: the session's prompt settings (prompt mode, macro engine,
 * post-processing, timezone, persona position, lorebook scan settings, author's note), docs/decisions.md
 * "Prompt settings", in `{data}`.
 */
@ApiTags('prompt runtime')
@Envelope('data')
@Controller('sessions/:id/prompt-runtime')
export class PromptSettingsController {
  constructor(
    private readonly getSettings: GetPromptSettingsUseCase,
    private readonly putSettings: PutPromptSettingsUseCase,
    private readonly getAssets: GetPromptRuntimeAssetsUseCase,
  ) {}

  /** The library assets (and their versions) the session's next turn is assembled from. */
  @Get('assets')
  assets(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.getAssets.execute(actor, id);
  }

  @Get('mode')
  get(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.getSettings.execute(actor, id);
  }

  @Put('mode')
  put(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: PutPromptSettingsDto) {
    return this.putSettings.execute(actor, id, { ...body });
  }
}
