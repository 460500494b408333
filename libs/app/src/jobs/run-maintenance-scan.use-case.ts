import { Inject, Injectable, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { LOGGER, type JsonLogger } from '@hearth/platform';
import type { MaintenanceScanStep } from './maintenance-scan-step';
import { ReconcileJobsUseCase } from './reconcile-jobs.use-case';
import { CleanupExpiredInjectionsUseCase } from '../prompt-runtime/cleanup-expired-injections.use-case';
import { PruneHistoryEditsUseCase } from '../turns/prune-history-edits.use-case';
import { ExpireTemporaryConversationsUseCase } from '../temporary-conversations/expire-temporary-conversations.use-case';
import { CleanupTemporaryConversationsUseCase } from '../temporary-conversations/cleanup-temporary-conversations.use-case';
import { PurgeExpiredFilesUseCase } from './purge-expired-files.use-case';

/**
 * The steps of `maintenance.scan`, in order: the one place later issues add their TTL and
 * cleanup scans (one line each; the class must be provided in the worker's module tree).
 */
export const MAINTENANCE_SCAN_STEPS: ReadonlyArray<Type<MaintenanceScanStep>> = [
  ReconcileJobsUseCase,
  CleanupExpiredInjectionsUseCase,
  PruneHistoryEditsUseCase,
  ExpireTemporaryConversationsUseCase,
  CleanupTemporaryConversationsUseCase,
  PurgeExpiredFilesUseCase,
];

export interface MaintenanceScanResult {
  steps: Array<{ step: string; ok: boolean; summary?: unknown; error?: string }>;
}

/** Runs every scan step; one failing step is logged and does not stop the others. */
@Injectable()
export class RunMaintenanceScanUseCase {
  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async execute(
    steps: ReadonlyArray<Type<MaintenanceScanStep>> = MAINTENANCE_SCAN_STEPS,
  ): Promise<MaintenanceScanResult> {
    const result: MaintenanceScanResult = { steps: [] };
    for (const type of steps) {
      const step = this.moduleRef.get(type, { strict: false });
      try {
        result.steps.push({ step: step.stepName, ok: true, summary: await step.run() });
      } catch (error) {
        this.logger.error(
          { msg: 'maintenance scan step failed', step: step.stepName, error: String(error) },
          'Maintenance',
        );
        result.steps.push({ step: step.stepName, ok: false, error: String(error) });
      }
    }
    this.logger.debug({ msg: 'maintenance scan finished', ...result }, 'Maintenance');
    return result;
  }
}
