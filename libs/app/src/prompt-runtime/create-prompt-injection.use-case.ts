import { Inject, Injectable } from '@nestjs/common';
import { newId } from '@hearth/domain';
import {
  INJECTION_LIMITS,
  injectionExpiresAt,
  PROMPT_INJECTION_ID_PREFIX,
  requireInjectionCreate,
} from '@hearth/domain/prompt/injections';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  inTransaction,
  promptRuntimeRepository,
  type Db,
  type PromptInjectionRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { injectionQuotaExceeded, injectionRef } from './injection-rules';
import {
  promptRuntimeLogScope,
  requirePromptRuntimeTarget,
  promptRuntimeWriterId,
} from './prompt-runtime-access';

/**
 * `POST .../prompt-runtime/injections` (session or branch scope): body rules of spec 2 (400
 * `invalid_injection_payload`), at most 128 live records per scope (400 `injection_scope_quota_exceeded`),
 * counted while the session row is locked so parallel creates cannot overshoot. Logs
 * `prompt_injection.create` with lengths only.
 */
@Injectable()
export class CreatePromptInjectionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    branchId: string | null,
    body: Record<string, unknown>,
  ): Promise<PromptInjectionRow> {
    const fields = requireInjectionCreate(body);
    return inTransaction(this.db, async ({ tx }) => {
      const target = await requirePromptRuntimeTarget(this.access, tx, actor, sessionId, branchId, 'write');
      const scope = target.branch ? 'branch' : 'session';
      const now = Date.now();
      if (
        (await promptRuntimeRepository.countInjections(tx, target.scope, now)) >= INJECTION_LIMITS.per_scope
      )
        throw injectionQuotaExceeded(scope);
      const row = await promptRuntimeRepository.insertInjection(tx, {
        id: newId(PROMPT_INJECTION_ID_PREFIX),
        account_id: target.session.account_id,
        session_id: target.session.id,
        branch_id: target.scope.branchId,
        scope,
        source_kind: 'client_injection',
        title: fields.title,
        content: fields.content,
        placement: fields.placement,
        placement_params: fields.placement_params === null ? null : JSON.stringify(fields.placement_params),
        order: fields.order,
        enabled: fields.enabled,
        mode_scope: fields.mode_scope,
        ttl_ms: fields.ttl_ms,
        expires_at: injectionExpiresAt(now, fields.ttl_ms),
        created_by: promptRuntimeWriterId(actor),
        created_at: now,
        updated_at: now,
      });
      await this.logs.write(tx, actor, {
        action: 'prompt_injection.create',
        ...promptRuntimeLogScope(target),
        target_type: 'prompt_injection',
        target_id: row.id,
        after_ref: injectionRef(row),
      });
      return row;
    });
  }
}
