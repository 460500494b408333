import type { Backoff } from './job-retry-policy';

/** Tunables of the ledger runner and reconciler; defaults suit production, tests shorten them. */
export interface JobRunnerSettings {
  /** How long an attempt holds its job without renewing; renewed every third of it while running. */
  leaseMs: number;
  /** Replaces every job definition's backoff (tests). */
  backoff?: Backoff;
  /** Rows the reconciler looks at per pass. */
  reconcileBatch: number;
}

export const JOB_RUNNER_SETTINGS = Symbol('JOB_RUNNER_SETTINGS');

export const DEFAULT_JOB_RUNNER_SETTINGS: JobRunnerSettings = { leaseMs: 60_000, reconcileBatch: 500 };
