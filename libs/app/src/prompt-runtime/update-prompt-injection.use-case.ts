import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson } from '@hearth/domain';
import { injectionExpiresAt, requireInjectionPatch } from '@hearth/domain/prompt/injections';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  inTransaction,
  promptRuntimeRepository,
  type Db,
  type PromptInjectionRow,
  type PromptInjectionsTable,
} from '@hearth/persistence';
import type { Updateable } from 'kysely';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { injectionNotFound, injectionRef } from './injection-rules';
import { promptRuntimeLogScope, requirePromptRuntimeTarget } from './prompt-runtime-access';

/**
 * `PATCH .../prompt-runtime/injections/:injectionId`: at least one mutable field; `placement_params`,
 * `mode_scope` and `ttl_ms` may be null to clear. A changed `ttl_ms` moves `expires_at` to
 * `created_at + ttl_ms`. A missing id, another scope's record or an expired one is 404
 * `injection_not_found`. A PATCH that changes nothing writes nothing; a change logs
 * `prompt_injection.update` (lengths only).
 */
@Injectable()
export class UpdatePromptInjectionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    branchId: string | null,
    injectionId: string,
    body: Record<string, unknown>,
  ): Promise<PromptInjectionRow> {
    const patch = requireInjectionPatch(body);
    return inTransaction(this.db, async ({ tx }) => {
      const target = await requirePromptRuntimeTarget(this.access, tx, actor, sessionId, branchId, 'write');
      const before = await promptRuntimeRepository.findInjection(tx, target.scope, injectionId, Date.now());
      if (!before) throw injectionNotFound();
      const changes: Updateable<PromptInjectionsTable> = {};
      const changed: string[] = [];
      for (const [field, value] of Object.entries(patch) as Array<[keyof typeof patch, unknown]>) {
        if (canonicalJson(value) === canonicalJson(before[field])) continue;
        changed.push(field);
        if (field === 'placement_params')
          changes.placement_params = value === null ? null : JSON.stringify(value);
        else Object.assign(changes, { [field]: value });
      }
      if (changed.length === 0) return before;
      if (changed.includes('ttl_ms'))
        changes.expires_at = injectionExpiresAt(before.created_at, patch.ttl_ms ?? null);
      changes.updated_at = Date.now();
      const after = await promptRuntimeRepository.updateInjection(tx, before.id, changes);
      await this.logs.write(tx, actor, {
        action: 'prompt_injection.update',
        ...promptRuntimeLogScope(target),
        target_type: 'prompt_injection',
        target_id: after.id,
        before_ref: injectionRef(before),
        after_ref: injectionRef(after),
        metadata: { changed_fields: changed },
      });
      return after;
    });
  }
}
