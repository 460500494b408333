/**
 * One step of the repeatable `maintenance.scan`. Later issues add TTL and cleanup scans as
 * `@Injectable()` classes implementing this, listed in MAINTENANCE_SCAN_STEPS and provided by
 * their feature module (or JobsModule).
 */
export interface MaintenanceScanStep {
  readonly stepName: string;
  /** Idempotent and safe to run on several workers at once; returns a small summary for the log. */
  run(): Promise<Record<string, unknown> | object>;
}
