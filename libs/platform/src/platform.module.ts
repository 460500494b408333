import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createLlmClient } from './llm/llm-client';
import { createGuardedFetch, type GuardedFetch } from './net-guard/guarded-fetch';
import { SecretBox } from './secrets/secret-box';
import type { PlatformResources } from './resources';
import {
  CONFIG,
  CREDENTIALS,
  DATABASE_HANDLE,
  DB,
  DB_PIPELINE,
  EVENT_BUS,
  GUARDED_FETCH,
  JOB_QUEUE,
  LLM_CLIENT,
  LOGGER,
  METRICS,
  PLATFORM,
  SECRET_BOX,
} from './tokens';

/** Closes the guarded fetch's pooled connections when the application shuts down. */
@Injectable()
export class GuardedFetchCloser implements OnApplicationShutdown {
  constructor(@Inject(GUARDED_FETCH) private readonly guardedFetch: GuardedFetch) {}
  async onApplicationShutdown(): Promise<void> {
    await this.guardedFetch.close();
  }
}

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
      { provide: DB_PIPELINE, useValue: resources.database.pipeline },
      { provide: CREDENTIALS, useValue: resources.credentials },
      { provide: EVENT_BUS, useValue: resources.eventBus },
      { provide: JOB_QUEUE, useValue: resources.jobQueue },
      { provide: LOGGER, useValue: resources.logger },
      { provide: METRICS, useValue: resources.metrics },
      { provide: SECRET_BOX, useFactory: () => SecretBox.fromConfig(resources.config) },
      {
        provide: GUARDED_FETCH,
        useFactory: () => createGuardedFetch({ allowPrivate: resources.config.allowPrivateBaseUrl }),
      },
      {
        provide: LLM_CLIENT,
        useFactory: (f: GuardedFetch) => createLlmClient({ fetch: f }),
        inject: [GUARDED_FETCH],
      },
      { provide: GuardedFetchCloser, useClass: GuardedFetchCloser },
    ];
    return { module: PlatformModule, providers, exports: providers.map((p) => p.provide) };
  }
}
