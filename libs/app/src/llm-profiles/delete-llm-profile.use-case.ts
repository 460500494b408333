import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, llmBindingsRepository, llmProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { profileNotFound, profileRef } from './llm-profile-rules';

/**
 * `DELETE /llm-profiles/:id`: soft delete (status `deleted`, deleted_at). The profile row is locked, stale
 * session bindings (whose session is gone) are cleared first, then any remaining binding or an active
 * Project LLM override referencing the profile answers 409 `profile_in_use` (details: counts). Deleting
 * a deleted profile answers the same 200 and writes nothing. Logged as `llm_profile.delete`.
 */
@Injectable()
export class DeleteLlmProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    return inTransaction(this.db, async ({ tx }) => {
      const profile = await llmProfilesRepository.lockForAccount(tx, actor.accountId, id);
      if (!profile) throw profileNotFound();
      if (profile.status === 'deleted') return { id, deleted: true as const };
      const cleared = await llmBindingsRepository.deleteStaleSessionBindings(tx, id);
      const bindings = await llmBindingsRepository.countByProfile(tx, id);
      const overrides = await llmProfilesRepository.countOverrides(tx, id);
      if (bindings.global + bindings.session + overrides > 0) {
        throw new DomainError('profile_in_use', 409, 'The LLM profile is still bound; unbind it first', {
          global_binding_count: bindings.global,
          session_binding_count: bindings.session,
          project_override_count: overrides,
        });
      }
      const now = Date.now();
      await llmProfilesRepository.setStatus(tx, id, 'deleted', now);
      await llmProfilesRepository.bumpResolutionVersion(tx, actor.accountId);
      await this.logs.write(tx, actor, {
        action: 'llm_profile.delete',
        workspace_id: profile.workspace_id,
        target_type: 'llm_profile',
        target_id: id,
        before_ref: profileRef(profile),
        after_ref: { ...profileRef(profile), status: 'deleted' },
        metadata: { stale_session_bindings_cleared: cleared },
      });
      return { id, deleted: true as const };
    });
  }
}
