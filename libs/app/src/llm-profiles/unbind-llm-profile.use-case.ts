import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, llmBindingsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { checkScopeInput, resolveScope } from './binding-scope';
import type { BindingScope, InstanceSlot } from './llm-profile-rules';

export interface UnbindInput {
  scope?: BindingScope;
  session_id?: string | null;
}

/**
 * `DELETE /llm-profiles/bindings/:slot?scope=&session_id=`: removes one binding. A missing session (or
 * one of another account) answers 404 `session_scope_not_found`, a missing binding 404
 * `binding_not_found`. Logged as `llm_profile.unbind`.
 */
@Injectable()
export class UnbindLlmProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    slot: InstanceSlot,
    input: UnbindInput,
  ): Promise<{ scope: BindingScope; scope_id: string; instance_slot: InstanceSlot; unbound: true }> {
    checkScopeInput(input);
    return inTransaction(this.db, async ({ tx }) => {
      const { scope, scopeId, session } = await resolveScope(tx, actor, input);
      const binding = await llmBindingsRepository.find(tx, {
        accountId: actor.accountId,
        scope,
        scopeId,
        slot,
      });
      // The delete decides between concurrent unbinds of one binding: only one removes it.
      if (!binding || !(await llmBindingsRepository.delete(tx, binding.id)))
        throw new DomainError('binding_not_found', 404, 'No binding for this slot and scope');
      await llmBindingsRepository.bumpResolutionVersion(tx, actor.accountId);
      await this.logs.write(tx, actor, {
        action: 'llm_profile.unbind',
        session_id: session?.id ?? null,
        project_id: session?.project_id ?? null,
        target_type: 'llm_profile_binding',
        target_id: binding.id,
        before_ref: { profile_id: binding.profile_id, param_keys: Object.keys(binding.params ?? {}) },
        metadata: { scope, scope_id: scopeId, instance_slot: slot, profile_id: binding.profile_id },
      });
      return { scope, scope_id: scopeId, instance_slot: slot, unbound: true as const };
    });
  }
}
