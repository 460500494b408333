import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  AppendTemporaryMessageUseCase,
  CreateTemporaryConversationUseCase,
  EndTemporaryConversationUseCase,
  ExportTemporaryConversationUseCase,
  GetTemporaryConversationUseCase,
  GetTemporaryTranscriptUseCase,
  InspectTemporaryConversationUseCase,
  TemporaryConversationTurnUseCase,
  type TemporaryTurnInput,
} from '@hearth/app';
import type { TemporaryTerminalMove } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { CONFIG, type AppConfig } from '@hearth/platform';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { isEventStream } from '../turns/turns.dto';
import { runTemporaryTurn } from './temporary-turn-transport';
import {
  AppendTemporaryMessageDto,
  CreateTemporaryConversationDto,
  ExportTemporaryConversationDto,
  InspectTemporaryQueryDto,
  TemporaryRespondDto,
  TemporaryRetryDto,
  TemporaryRetryStepDto,
  toExportView,
} from './temporary-conversations.dto';
import { toInspectView, toTemporaryConversationView, toTranscriptView } from './temporary-conversation-views';

/**
 * Spec 2 "Temporary conversations" (docs/decisions.md "Temporary conversations"): the resource id is
 * its session's id; the public routes answer `internal` conversations 404 `conversation_not_found`
 * (inspect excepted). Respond, retry and retry-step answer JSON, or SSE with Accept `text/event-stream`.
 */
@ApiTags('temporary-conversations')
@Envelope('data')
@Controller()
export class TemporaryConversationsController {
  constructor(
    private readonly create: CreateTemporaryConversationUseCase,
    private readonly get: GetTemporaryConversationUseCase,
    private readonly append: AppendTemporaryMessageUseCase,
    private readonly turns: TemporaryConversationTurnUseCase,
    private readonly transcript: GetTemporaryTranscriptUseCase,
    private readonly inspect: InspectTemporaryConversationUseCase,
    private readonly exporter: ExportTemporaryConversationUseCase,
    private readonly end: EndTemporaryConversationUseCase,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('sessions/:id/temporary-conversations')
  @ApiOperation({ summary: 'Create a temporary conversation from a session (bindings copied, no history)' })
  async fromSession(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: CreateTemporaryConversationDto,
  ) {
    return toTemporaryConversationView(await this.create.fromSession(actor, id, body));
  }

  @Post('projects/:id/temporary-conversations')
  @ApiOperation({ summary: 'Create a temporary conversation in a Project (no bindings)' })
  async fromProject(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: CreateTemporaryConversationDto,
  ) {
    return toTemporaryConversationView(await this.create.fromProject(actor, id, body));
  }

  @Get('temporary-conversations/:id')
  async detail(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return toTemporaryConversationView(await this.get.execute(actor, id));
  }

  @Post('temporary-conversations/:id/messages')
  @HttpCode(200)
  @ApiOperation({ summary: 'Append one message (no generation)' })
  messages(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: AppendTemporaryMessageDto) {
    return this.append.execute(actor, id, { role: body.role, content: body.content });
  }

  @Post('temporary-conversations/:id/respond')
  respond(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: TemporaryRespondDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.turn(actor, id, { kind: 'respond', ...body }, req, res, accept);
  }

  @Post('temporary-conversations/:id/retry')
  retry(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: TemporaryRetryDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.turn(actor, id, { kind: 'retry', ...body }, req, res, accept);
  }

  @Post('temporary-conversations/:id/retry-step')
  retryStep(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: TemporaryRetryStepDto,
    @Headers('accept') accept: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.turn(actor, id, { kind: 'retry_step', ...body }, req, res, accept);
  }

  @Get('temporary-conversations/:id/transcript')
  async transcriptOf(@CurrentActor() actor: Actor, @Param('id') id: string) {
    const { conversation_id, floors } = await this.transcript.execute(actor, id);
    return toTranscriptView(conversation_id, floors);
  }

  @Get('temporary-conversations/:id/inspect')
  async inspectOf(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: InspectTemporaryQueryDto,
  ) {
    return toInspectView(await this.inspect.execute(actor, id, query.include_agent_private === true));
  }

  @Post('temporary-conversations/:id/export')
  @ApiOperation({ summary: 'Stage the latest output page as a candidate for a page of the source session' })
  async exportTo(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: ExportTemporaryConversationDto,
  ) {
    return toExportView(await this.exporter.execute(actor, id, body));
  }

  @Post('temporary-conversations/:id/finalize')
  @HttpCode(200)
  finalize(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.move(actor, id, 'finalize');
  }

  @Post('temporary-conversations/:id/discard')
  @HttpCode(200)
  discard(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.move(actor, id, 'discard');
  }

  @Post('temporary-conversations/:id/cancel')
  @HttpCode(200)
  cancel(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.move(actor, id, 'cancel');
  }

  private async move(actor: Actor, id: string, move: TemporaryTerminalMove) {
    return toTemporaryConversationView(await this.end.execute(actor, id, move));
  }

  private async turn(
    actor: Actor,
    id: string,
    input: TemporaryTurnInput,
    req: Request,
    res: Response,
    accept: string | undefined,
  ) {
    const prepared = await this.turns.prepare(actor, id, input);
    await runTemporaryTurn(id, input.kind, prepared, req, res, {
      sse: isEventStream(accept),
      heartbeatMs: this.config.sseHeartbeatMs,
    });
  }
}
