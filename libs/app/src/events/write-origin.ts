import type { ProjectEventInput } from './project-event-writer';

/**
 * Where a write comes from when it is not a request: a background job (an Agent Job's delivery).
 * Its Project event gets `source` (`runtime_job`: agents never trigger on it), the job as
 * `correlation_id` and the event that started the job as `causation_event_id`; its operation log
 * gets `source_type` (`job`). A write without an origin is a request's (`api`, `http`).
 */
export interface WriteOrigin {
  source: NonNullable<ProjectEventInput['source']>;
  correlation_id: string | null;
  causation_event_id: string | null;
  log_source_type: string;
}
