import { Injectable } from '@nestjs/common';
import { ID_PREFIX, maskSensitive, newId, summariseDiff } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  operationLogsRepository,
  type Executor,
  type NewOperationLog,
  type OperationLogRow,
} from '@hearth/persistence';
import { currentRequestId } from '@hearth/platform';

export interface OperationLogInput {
  action: string;
  status?: 'succeeded' | 'failed' | 'denied' | 'cancelled';
  /** The account whose data this is (defaults to the actor's). */
  account_id?: string | null;
  workspace_id?: string | null;
  project_id?: string | null;
  session_id?: string | null;
  branch_id?: string | null;
  floor_id?: string | null;
  run_id?: string | null;
  target_type?: string | null;
  target_id?: string | null;
  /** Essential fields only; masked before storing. */
  before_ref?: Record<string, unknown> | null;
  after_ref?: Record<string, unknown> | null;
  /** When both refs are given and no diff is, a path summary of their difference is stored. */
  diff?: Record<string, unknown> | null;
  metadata?: Record<string, unknown> | null;
  operation_group_id?: string | null;
  source_type?: string;
}

/**
 * Writes an operation log row in the caller's transaction (ARCHITECTURE.md rule 4). Actor, request
 * id and time are filled in here; refs, diffs and metadata are masked.
 */
@Injectable()
export class OperationLogWriter {
  async write(db: Executor, actor: Actor | null, input: OperationLogInput): Promise<OperationLogRow> {
    return operationLogsRepository.insert(db, this.row(actor, input));
  }

  /**
   * The row `write` inserts, for a write that puts it in the database with its own statement (one
   * statement holding the change, its log and its event): same fields, same masking.
   */
  row(actor: Actor | null, input: OperationLogInput): NewOperationLog {
    const accountId = input.account_id ?? actor?.accountId ?? null;
    const json = (value: unknown) =>
      value === null || value === undefined ? null : JSON.stringify(maskSensitive(value));
    const diff =
      input.diff ??
      (input.before_ref && input.after_ref ? summariseDiff(input.before_ref, input.after_ref) : null);
    return {
      id: newId(ID_PREFIX.operationLog),
      account_id: accountId,
      actor_type: actor ? actor.kind : 'system',
      actor_id: actor ? (actor.kind === 'account' ? actor.accountId : actor.clientId) : null,
      actor_account_id: actor?.accountId ?? accountId,
      operation_group_id: input.operation_group_id ?? null,
      request_id: currentRequestId(),
      workspace_id: input.workspace_id ?? null,
      project_id: input.project_id ?? null,
      source_type: input.source_type ?? (actor ? 'http' : 'system'),
      action: input.action,
      status: input.status ?? 'succeeded',
      session_id: input.session_id ?? null,
      branch_id: input.branch_id ?? null,
      floor_id: input.floor_id ?? null,
      run_id: input.run_id ?? null,
      target_type: input.target_type ?? null,
      target_id: input.target_id ?? null,
      before_ref: json(input.before_ref),
      after_ref: json(input.after_ref),
      diff: diff ? JSON.stringify(diff) : null,
      metadata: json(input.metadata),
      created_at: Date.now(),
    };
  }
}
