import { Body, Controller, Headers, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { GenerateTurnUseCase, type TurnRequest } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CONFIG, type AppConfig } from '@hearth/platform';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { runTurn } from './turn-transport';
import {
  EditAndRegenerateDto,
  editedText,
  isEventStream,
  RegenerateDto,
  RespondDto,
  RetryOptionsDto,
  retriedFloorId,
  RetryFloorDto,
  RetryStepDto,
  type TurnOptionsDto,
} from './turns.dto';

const options = (body: TurnOptionsDto) => ({
  generation_params: body.generation_params ?? null,
  prompt_runtime_injections: body.prompt_runtime_injections ?? null,
  debug_options: body.debug_options ?? null,
  detach: body.detach === true,
});

const retryOptions = (body: RetryOptionsDto) => ({
  ...options(body),
  confirmed_session_state_mutation_ids: body.confirmed_session_state_mutation_ids ?? null,
});

/**
 * The chat turn routes of spec 2 (docs/decisions.md "Turns and runs"). Each answers JSON, or SSE for
 * `/respond/stream` and for any of them with `Accept: text/event-stream`.
 */
@ApiTags('chat')
@Envelope('data')
@Controller()
export class TurnsController {
  constructor(
    private readonly generate: GenerateTurnUseCase,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('sessions/:id/respond')
  @ApiOperation({ summary: 'Generate a reply: JSON, or SSE with Accept: text/event-stream' })
  respond(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: RespondDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.turn(actor, this.respondRequest(id, body), req, res, isEventStream(accept));
  }

  @Post('sessions/:id/respond/stream')
  @ApiOperation({ summary: 'Generate a reply as server-sent events' })
  @ApiProduces('text/event-stream')
  respondStream(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: RespondDto,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.turn(actor, this.respondRequest(id, body), req, res, true);
  }

  @Post('sessions/:id/regenerate')
  @ApiOperation({ summary: 'Regenerate the branch head: a new output page version' })
  regenerate(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: RegenerateDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    const request: TurnRequest = {
      kind: 'regenerate',
      sessionId: id,
      branch_id: body.branch_id,
      ...retryOptions(body),
    };
    return this.turn(actor, request, req, res, isEventStream(accept));
  }

  @Post('floors/:id/retry')
  @ApiOperation({ summary: 'Retry a committed floor: a new output page version, the old one kept' })
  retry(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: RetryFloorDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.turn(
      actor,
      { kind: 'retry_floor', floorId: retriedFloorId(id, body), ...retryOptions(body) },
      req,
      res,
      isEventStream(accept),
    );
  }

  @Post('floors/:id/retry-step')
  @ApiOperation({ summary: 'Retry from a generation step (a turn without tools has one step)' })
  retryStep(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: RetryStepDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    const request: TurnRequest = {
      kind: 'retry_step',
      floorId: retriedFloorId(id, body),
      from_step_index: body.from_step_index,
      ...retryOptions(body),
    };
    return this.turn(actor, request, req, res, isEventStream(accept));
  }

  @Post('messages/:id/edit-and-regenerate')
  @ApiOperation({ summary: 'Edit the user message of a floor (new input page) and regenerate its reply' })
  editAndRegenerate(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: EditAndRegenerateDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    const request: TurnRequest = {
      kind: 'edit_and_regenerate',
      messageId: id,
      content: editedText(body),
      ...retryOptions(body),
    };
    return this.turn(actor, request, req, res, isEventStream(accept));
  }

  private respondRequest(id: string, body: RespondDto): TurnRequest {
    return {
      kind: 'respond',
      sessionId: id,
      message: body.message,
      branch_id: body.branch_id,
      source_floor_id: body.source_floor_id,
      session_state_writes: body.session_state_writes ?? null,
      ...options(body),
    };
  }

  private async turn(actor: Actor, request: TurnRequest, req: Request, res: Response, sse: boolean) {
    const prepared = await this.generate.prepare(actor, request);
    await runTurn(prepared, req, res, { sse, heartbeatMs: this.config.sseHeartbeatMs });
  }
}
