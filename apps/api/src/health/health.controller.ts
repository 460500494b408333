import { Controller, Get, Header, HttpStatus, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { type DatabaseHandle, healthRepository } from '@hearth/persistence';
import { DATABASE_HANDLE, EVENT_BUS, type EventBus, METRICS, type Metrics } from '@hearth/platform';
import { Envelope, Raw } from '../http/envelope';
import { Public } from '../http/public.decorator';

/** Operational routes, open without a key (CONTRACT.md). */
@ApiExcludeController()
@Public()
@Envelope('bare')
@Controller()
export class HealthController {
  constructor(
    @Inject(DATABASE_HANDLE) private readonly database: DatabaseHandle,
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  @Get('health')
  health() {
    return { status: 'ok' };
  }

  @Get('health/ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const [database, redis] = await Promise.all([
      healthRepository.ping(this.database.db),
      this.bus.isHealthy(),
    ]);
    const ok = database && redis;
    res.status(ok ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return {
      status: ok ? 'ready' : 'unavailable',
      checks: {
        database: { ok: database, kind: this.database.kind },
        event_bus: { ok: redis, kind: this.bus.kind },
      },
    };
  }

  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async metricsText() {
    return new Raw(await this.metrics.registry.metrics());
  }
}
