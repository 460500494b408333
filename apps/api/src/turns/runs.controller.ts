import { Controller, Get, Headers, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CancelRunUseCase, GetRunUseCase, StreamRunEventsUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CONFIG, type AppConfig } from '@hearth/platform';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { SseWriter } from '../http/sse-writer';

/** Generation runs (docs/decisions.md "Turns and runs"): snapshot, reattach, cancel. */
@ApiTags('chat')
@Envelope('data')
@Controller('runs')
export class RunsController {
  constructor(
    private readonly getRun: GetRunUseCase,
    private readonly streamEvents: StreamRunEventsUseCase,
    private readonly cancelRun: CancelRunUseCase,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(':id')
  @ApiOperation({ summary: 'The run snapshot (spec 2 "Run event snapshot")' })
  get(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.getRun.execute(actor, id);
  }

  @Post(':id/cancel')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel a running generation (here or on another replica)' })
  cancel(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.cancelRun.execute(actor, id);
  }

  @Get(':id/events')
  @ApiOperation({
    summary: 'Reattach to a detached run: replay after Last-Event-ID, then live until done/error',
  })
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false })
  async events(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const prepared = await this.streamEvents.execute(actor, id, lastEventId);
    let writer: SseWriter;
    try {
      writer = new SseWriter(req, res, { heartbeatMs: this.config.sseHeartbeatMs });
    } catch (error) {
      prepared.cancel();
      throw error;
    }
    prepared.start(writer);
  }
}
