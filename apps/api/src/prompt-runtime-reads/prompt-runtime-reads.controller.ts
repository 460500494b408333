import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CompareFloorPromptsUseCase,
  ExplainFloorPromptUseCase,
  InspectPromptUseCase,
  PreviewPromptMacrosUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { ComparePromptsDto, InspectPromptDto, PreviewMacrosDto } from './prompt-runtime-reads.dto';

/**
 * Spec 2's prompt-runtime reads of a session (docs/decisions.md "Turn context and dry-run"): compare
 * two committed floors' stored prompts, preview macros, inspect the next prompt. `{data}`, 200.
 */
@ApiTags('prompt runtime')
@Envelope('data')
@Controller('sessions/:id/prompt-runtime')
export class SessionPromptReadsController {
  constructor(
    private readonly compare: CompareFloorPromptsUseCase,
    private readonly preview: PreviewPromptMacrosUseCase,
    private readonly inspect: InspectPromptUseCase,
  ) {}

  @Post('compare')
  @HttpCode(200)
  compareFloors(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: ComparePromptsDto) {
    return this.compare.execute(actor, id, body);
  }

  @Post('preview')
  @HttpCode(200)
  previewMacros(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: PreviewMacrosDto) {
    return this.preview.execute(actor, id, body);
  }

  @Post('inspect')
  @HttpCode(200)
  inspectPrompt(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: InspectPromptDto) {
    return this.inspect.execute(actor, id, body);
  }
}

/** `GET /floors/:id/prompt-runtime/explain`: the stored prompt of a committed floor. */
@ApiTags('prompt runtime')
@Envelope('data')
@Controller('floors/:id/prompt-runtime')
export class FloorPromptExplainController {
  constructor(private readonly explain: ExplainFloorPromptUseCase) {}

  @Get('explain')
  explainFloor(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.explain.execute(actor, id);
  }
}
