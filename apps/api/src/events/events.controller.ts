import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ListProjectEventsUseCase, OpenProjectEventStreamUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { type AppConfig, CONFIG } from '@hearth/platform';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { SseWriter } from '../http/sse-writer';
import { ProjectEventQueryDto, ProjectEventStreamQueryDto } from './events.dto';

/** The Project event log (spec 1 "Projects"): a keyset query and an SSE stream. No `data` wrapper. */
@ApiTags('projects')
@Envelope('bare')
@Controller('projects')
export class EventsController {
  constructor(
    private readonly listEvents: ListProjectEventsUseCase,
    private readonly openStream: OpenProjectEventStreamUseCase,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(':id/events')
  @ApiOperation({ summary: 'Project events after a sequence: {items, next_after, has_more}' })
  list(@CurrentActor() actor: Actor, @Param('id') id: string, @Query() query: ProjectEventQueryDto) {
    return this.listEvents.execute(actor, id, query);
  }

  @Get(':id/events/stream')
  @ApiOperation({
    summary: 'Server-sent events: replay after the cursor, then live; `: heartbeat` every 15 s',
  })
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume cursor (the last received id)' })
  async stream(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: ProjectEventStreamQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const prepared = await this.openStream.execute(actor, id, { ...query, last_event_id: lastEventId });
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
