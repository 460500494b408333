import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { PlatformResources } from './resources';
import { CONFIG, DATABASE_HANDLE, DB, EVENT_BUS, JOB_QUEUE, LOGGER, METRICS, PLATFORM } from './tokens';

/** Hands the resources opened at boot to Nest. Global: every feature module can inject them. */
@Global()
@Module({})
export class PlatformModule {
  static register(resources: PlatformResources): DynamicModule {
    const providers = [
      { provide: PLATFORM, useValue: resources },
      { provide: CONFIG, useValue: resources.config },
      { provide: DATABASE_HANDLE, useValue: resources.database },
      { provide: DB, useValue: resources.database.db },
      { provide: EVENT_BUS, useValue: resources.eventBus },
      { provide: JOB_QUEUE, useValue: resources.jobQueue },
      { provide: LOGGER, useValue: resources.logger },
      { provide: METRICS, useValue: resources.metrics },
    ];
    return { module: PlatformModule, providers, exports: providers.map((p) => p.provide) };
  }
}
