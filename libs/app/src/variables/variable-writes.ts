import { newId } from '@hearth/domain';
import { variablesRepository, type Executor, type VariableRow } from '@hearth/persistence';
import { requireWritableHost, type HostCache } from './variable-hosts';
import {
  normaliseTarget,
  serialiseVariableValue,
  VARIABLE_ID_PREFIX,
  variableHostNotFound,
  type NormalisedTarget,
  type VariableTargetInput,
} from './variable-rules';

/** One `VariableWrite` (spec 2 "Upsert body"). */
export interface VariableWriteInput extends VariableTargetInput {
  key: string;
  /** Any JSON; `undefined` means the field was missing (400). */
  value: unknown;
}

/** A write checked without I/O: its normalised target and serialised value. */
export interface PreparedWrite {
  target: NormalisedTarget;
  key: string;
  json: string;
  bytes: number;
}

export function prepareWrite(input: VariableWriteInput, index?: number): PreparedWrite {
  const target = normaliseTarget(input, index);
  const { json, bytes } = serialiseVariableValue(input.value, index);
  return { target, key: input.key, json, bytes };
}

/** A write whose host the database refused meanwhile (deleted concurrently: SQLSTATE 23503). */
const isForeignKeyViolation = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23503';

/**
 * Checks the host (404 / 409) and upserts the variable, inside the caller's transaction. A host deleted
 * between the check and the write (the foreign key refuses it) is 404 `variable_host_not_found` too.
 */
export async function applyWrite(
  tx: Executor,
  accountId: string,
  write: PreparedWrite,
  options: { index?: number; cache?: HostCache; now?: number } = {},
): Promise<{ variable: VariableRow; created: boolean }> {
  const host = await requireWritableHost(tx, accountId, write.target, options);
  const now = options.now ?? Date.now();
  try {
    return await variablesRepository.upsert(tx, {
      id: newId(VARIABLE_ID_PREFIX.variable),
      account_id: accountId,
      scope: write.target.scope,
      scope_id: write.target.scopeId,
      ...host,
      key: write.key,
      value: write.json,
      created_at: now,
      updated_at: now,
    });
  } catch (error) {
    if (isForeignKeyViolation(error))
      throw variableHostNotFound(write.target.scope, write.target.scopeId, options.index);
    throw error;
  }
}
