import { type DynamicModule, Module } from '@nestjs/common';
import { CreateJobUseCase } from './create-job.use-case';
import {
  DEFAULT_JOB_RUNNER_SETTINGS,
  JOB_RUNNER_SETTINGS,
  type JobRunnerSettings,
} from './job-runner-settings';
import { ReconcileJobsUseCase } from './reconcile-jobs.use-case';
import { RequestSystemPingUseCase } from './request-system-ping.use-case';
import { RunLedgerJobUseCase } from './run-ledger-job.use-case';
import { RunMaintenanceScanUseCase } from './run-maintenance-scan.use-case';
import { SystemPingUseCase } from './system-ping.use-case';
import { CleanupExpiredInjectionsUseCase } from '../prompt-runtime/cleanup-expired-injections.use-case';
import { PruneHistoryEditsUseCase } from '../turns/prune-history-edits.use-case';
import { ExpireTemporaryConversationsUseCase } from '../temporary-conversations/expire-temporary-conversations.use-case';
import { CleanupTemporaryConversationsUseCase } from '../temporary-conversations/cleanup-temporary-conversations.use-case';
import { PurgeExpiredFilesUseCase } from './purge-expired-files.use-case';

const USE_CASES = [
  CreateJobUseCase,
  RequestSystemPingUseCase,
  RunLedgerJobUseCase,
  SystemPingUseCase,
  ReconcileJobsUseCase,
  RunMaintenanceScanUseCase,
  CleanupExpiredInjectionsUseCase,
  PruneHistoryEditsUseCase,
  ExpireTemporaryConversationsUseCase,
  CleanupTemporaryConversationsUseCase,
  PurgeExpiredFilesUseCase,
];

/**
 * The job ledger's use cases, shared by both tiers: the API imports it to create jobs
 * (`JobsModule.register()`), the worker to run them.
 */
@Module({})
export class JobsModule {
  static register(settings: Partial<JobRunnerSettings> = {}): DynamicModule {
    const providers = [
      ...USE_CASES,
      { provide: JOB_RUNNER_SETTINGS, useValue: { ...DEFAULT_JOB_RUNNER_SETTINGS, ...settings } },
    ];
    return { module: JobsModule, providers, exports: [...USE_CASES, JOB_RUNNER_SETTINGS] };
  }
}
