import type { ProjectEventRow, StreamEventRow } from '@hearth/persistence';

/** The Project Event of spec 1, exactly its fields: the items of the query and the SSE `data:`. */
export interface ProjectEventItem {
  id: string;
  workspace_id: string;
  project_id: string;
  sequence: number;
  type: string;
  visibility: 'project' | 'owner' | 'internal';
  source: 'api' | 'runtime_job' | 'migration' | 'system';
  actor_account_id: string | null;
  actor_client_id: string | null;
  session_id: string | null;
  branch_id: string | null;
  floor_id: string | null;
  page_id: string | null;
  message_id: string | null;
  operation_log_id: string | null;
  correlation_id: string | null;
  causation_event_id: string | null;
  payload: unknown;
  created_at: number;
}

export function toProjectEventItem(row: ProjectEventRow): ProjectEventItem {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    project_id: row.project_id,
    sequence: row.sequence,
    type: row.type,
    visibility: row.visibility,
    source: row.source,
    actor_account_id: row.actor_account_id,
    actor_client_id: row.actor_client_id,
    session_id: row.session_id,
    branch_id: row.branch_id,
    floor_id: row.floor_id,
    page_id: row.page_id,
    message_id: row.message_id,
    operation_log_id: row.operation_log_id,
    correlation_id: row.correlation_id,
    causation_event_id: row.causation_event_id,
    // jsonb comes back parsed (pg and PGlite both parse it).
    payload: row.payload,
    created_at: row.created_at,
  };
}

/**
 * One event ready for the stream: its JSON is computed once and shared by every client that may
 * see it (performance-and-reliability.md A4: serialise once, not per client).
 */
export interface StreamedEvent {
  sequence: number;
  type: string;
  visibility: ProjectEventItem['visibility'];
  sessionId: string | null;
  /** The JSON of the ProjectEventItem, the `data:` line of the SSE block. */
  data: string;
}

export function toStreamedEvent(row: ProjectEventRow): StreamedEvent {
  const item = toProjectEventItem(row);
  return {
    sequence: item.sequence,
    type: item.type,
    visibility: item.visibility,
    sessionId: item.session_id,
    data: JSON.stringify(item),
  };
}

/** The stream's reads come with the event's JSON built by Postgres (`listStreamAfter`). */
export function streamedEventOf(row: StreamEventRow): StreamedEvent {
  return {
    sequence: row.sequence,
    type: row.type,
    visibility: row.visibility,
    sessionId: row.session_id,
    data: row.data,
  };
}
