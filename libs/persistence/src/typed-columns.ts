import type { NewOperationLog } from './operation-logs.repository';
import type { NewProjectEvent } from './project-events.repository';

/** A column and its SQL type: one typed parameter (`$n::type`) of a hand-written statement. */
export type TypedColumn<Key extends string = string> = readonly [Key, string];

/** An operation log row's columns as typed parameters (every column a write sets). */
export const OPERATION_LOG_COLUMNS = [
  ['id', 'text'],
  ['account_id', 'text'],
  ['workspace_id', 'text'],
  ['project_id', 'text'],
  ['actor_type', 'text'],
  ['actor_id', 'text'],
  ['actor_account_id', 'text'],
  ['operation_group_id', 'text'],
  ['request_id', 'text'],
  ['source_type', 'text'],
  ['action', 'text'],
  ['status', 'text'],
  ['session_id', 'text'],
  ['branch_id', 'text'],
  ['floor_id', 'text'],
  ['run_id', 'text'],
  ['target_type', 'text'],
  ['target_id', 'text'],
  ['before_ref', 'jsonb'],
  ['after_ref', 'jsonb'],
  ['diff', 'jsonb'],
  ['metadata', 'jsonb'],
  ['created_at', 'bigint'],
] as const satisfies ReadonlyArray<TypedColumn<keyof NewOperationLog & string>>;

/** A Project event's columns as typed parameters, but `sequence` (always the counter's). */
export const PROJECT_EVENT_COLUMNS = [
  ['id', 'text'],
  ['workspace_id', 'text'],
  ['project_id', 'text'],
  ['type', 'text'],
  ['visibility', 'text'],
  ['source', 'text'],
  ['actor_account_id', 'text'],
  ['actor_client_id', 'text'],
  ['session_id', 'text'],
  ['branch_id', 'text'],
  ['floor_id', 'text'],
  ['page_id', 'text'],
  ['message_id', 'text'],
  ['operation_log_id', 'text'],
  ['correlation_id', 'text'],
  ['causation_event_id', 'text'],
  ['payload', 'jsonb'],
  ['created_at', 'bigint'],
] as const satisfies ReadonlyArray<TypedColumn<Exclude<keyof NewProjectEvent, 'sequence'> & string>>;

/** `columns` without the ones a statement fills itself (from a joined row, or in SQL). */
export function columnsExcept<Column extends TypedColumn, Omitted extends Column[0]>(
  columns: readonly Column[],
  ...omitted: Omitted[]
): Array<Exclude<Column, readonly [Omitted, string]>> {
  return columns.filter(
    (column): column is Exclude<Column, readonly [Omitted, string]> =>
      !(omitted as string[]).includes(column[0]),
  );
}

/** The column names of an INSERT's column list. */
export const columnNames = (columns: readonly TypedColumn[]): string =>
  columns.map(([name]) => name).join(', ');

/** `$first::type, $first+1::type, ...`: one typed parameter per column. */
export const parameterSlots = (columns: readonly TypedColumn[], first: number): string =>
  columns.map(([, type], i) => `$${first + i}::${type}`).join(', ');
