import { type DynamicModule, Module, type Type } from '@nestjs/common';
import {
  AgentWorkModule,
  BackupWorkModule,
  ChatTransferWorkModule,
  CoreAppModule,
  JobsModule,
  type JobRunnerSettings,
} from '@hearth/app';
import { PlatformModule, type PlatformResources } from '@hearth/platform';
import type { JobProcessor } from './processors/job-processor';
import { MaintenanceScanProcessor } from './processors/maintenance-scan.processor';
import { SystemPingProcessor } from './processors/system-ping.processor';
import { ChatTransferProcessor } from './processors/chat-transfer.processor';
import { AgentRunProcessor } from './processors/agent-run.processor';
import { BackupTransferProcessor } from './processors/backup-transfer.processor';

/** One processor per job name this build handles; later issues add theirs here. */
export const WORKER_PROCESSORS: ReadonlyArray<Type<JobProcessor>> = [
  MaintenanceScanProcessor,
  SystemPingProcessor,
  ChatTransferProcessor,
  AgentRunProcessor,
  BackupTransferProcessor,
];

/** Feature modules whose use cases processors call; later issues add theirs, one per line. */
const FEATURE_MODULES: NonNullable<DynamicModule['imports']> = [
  ChatTransferWorkModule,
  AgentWorkModule,
  BackupWorkModule,
];

export interface WorkerModuleOptions {
  processors?: ReadonlyArray<Type<JobProcessor>>;
  jobRunner?: Partial<JobRunnerSettings>;
}

/** The worker tier's module: no HTTP, the same use cases as the API. Used by both entry points. */
@Module({})
export class WorkerModule {
  static register(resources: PlatformResources, options: WorkerModuleOptions = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        PlatformModule.register(resources),
        CoreAppModule,
        JobsModule.register(options.jobRunner),
        ...FEATURE_MODULES,
      ],
      providers: [...(options.processors ?? WORKER_PROCESSORS)],
    };
  }
}
