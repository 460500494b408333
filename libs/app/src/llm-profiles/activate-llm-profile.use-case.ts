import { Inject, Injectable } from '@nestjs/common';
import { newId, type BindingParams } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, llmBindingsRepository, llmProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { checkScopeInput, resolveScope } from './binding-scope';
import {
  LLM_BINDING_ID_PREFIX,
  normaliseBindingParams,
  profileInactive,
  profileNotFound,
  type BindingScope,
  type InstanceSlot,
} from './llm-profile-rules';

export interface ActivateLlmProfileInput {
  scope?: BindingScope;
  session_id?: string | null;
  instance_slot?: InstanceSlot;
  /** Omitted: keep the binding's params; null: clear them; an object: the new params (a null field cancels that field upstream). */
  params?: Record<string, unknown> | null;
}

export interface ActivationResult {
  profile_id: string;
  scope: BindingScope;
  scope_id: string;
  instance_slot: InstanceSlot;
  params: BindingParams | null;
  activated: true;
}

/**
 * `POST /llm-profiles/:id/activate`: upserts the binding (account, scope, scope_id, instance_slot).
 * Order: params (400 `invalid_params`), scope/session_id pair (400), profile (404 `profile_not_found`;
 * disabled or deleted: 409 `profile_inactive`), session (404 `session_scope_not_found`). The profile
 * row is share-locked so a concurrent DELETE is ordered with the new binding. Logged as
 * `llm_profile.activate`.
 */
@Injectable()
export class ActivateLlmProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, profileId: string, input: ActivateLlmProfileInput): Promise<ActivationResult> {
    const params =
      input.params === undefined || input.params === null
        ? input.params
        : normaliseBindingParams(input.params);
    checkScopeInput(input);
    const slot = input.instance_slot ?? '*';
    return inTransaction(this.db, async ({ tx }) => {
      const profile = await llmProfilesRepository.lockForAccount(tx, actor.accountId, profileId, 'share');
      if (!profile) throw profileNotFound();
      if (profile.status !== 'active') throw profileInactive(profile, 'activated');
      const { scope, scopeId, session } = await resolveScope(tx, actor, input);
      const key = { accountId: actor.accountId, scope, scopeId, slot };
      const existing = await llmBindingsRepository.find(tx, key);
      const nextParams = params === undefined ? ((existing?.params as BindingParams | null) ?? null) : params;
      const now = Date.now();
      const row = await llmBindingsRepository.upsert(tx, {
        id: newId(LLM_BINDING_ID_PREFIX),
        account_id: actor.accountId,
        scope,
        scope_id: scopeId,
        session_id: session?.id ?? null,
        instance_slot: slot,
        profile_id: profile.id,
        params: nextParams === null ? null : JSON.stringify(nextParams),
        created_at: now,
        updated_at: now,
      });
      await llmProfilesRepository.bumpResolutionVersion(tx, actor.accountId);
      await this.logs.write(tx, actor, {
        action: 'llm_profile.activate',
        workspace_id: profile.workspace_id,
        session_id: session?.id ?? null,
        project_id: session?.project_id ?? null,
        target_type: 'llm_profile_binding',
        target_id: row.id,
        before_ref: existing
          ? { profile_id: existing.profile_id, param_keys: Object.keys(existing.params ?? {}) }
          : null,
        after_ref: { profile_id: profile.id, param_keys: Object.keys(nextParams ?? {}) },
        metadata: { scope, scope_id: scopeId, instance_slot: slot, created: !existing },
      });
      return {
        profile_id: profile.id,
        scope,
        scope_id: scopeId,
        instance_slot: slot,
        params: (row.params as BindingParams | null) ?? null,
        activated: true as const,
      };
    });
  }
}
