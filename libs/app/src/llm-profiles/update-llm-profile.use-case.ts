import { Inject, Injectable } from '@nestjs/common';
import type { LlmProviderName } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  llmProfilesRepository,
  type Db,
  type LlmProfileRow,
} from '@hearth/persistence';
import {
  CONFIG,
  DB,
  maskSecret,
  SECRET_BOX,
  validateBaseUrl,
  type AppConfig,
  type SecretBox,
} from '@hearth/platform';
import { requireSomeField } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { profileConflict, profileInactive, profileNotFound, profileRef } from './llm-profile-rules';

export interface UpdateLlmProfileInput {
  preset_name?: string;
  provider?: LlmProviderName;
  model_id?: string;
  /** null clears it. */
  base_url?: string | null;
  /** null clears it. */
  api_key_name?: string | null;
  api_key?: string;
  status?: 'active' | 'disabled';
}

const FIELDS = [
  'preset_name',
  'provider',
  'model_id',
  'base_url',
  'api_key_name',
  'api_key',
  'status',
] as const;

/**
 * `PATCH /llm-profiles/:id`: at least one field (400). Order: profile (404 `profile_not_found`), a
 * deleted profile is not updatable (409 `profile_inactive`), base_url guard (400 `ssrf_blocked`), a new
 * key needs the master key (503), name conflict (409). A PATCH that changes nothing writes nothing; a
 * new key is always a change (it is re-encrypted). Logged as `llm_profile.update` (masked refs).
 */
@Injectable()
export class UpdateLlmProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateLlmProfileInput): Promise<LlmProfileRow> {
    requireSomeField(input, FIELDS);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const profile = await llmProfilesRepository.lockForAccount(tx, actor.accountId, id);
        if (!profile) throw profileNotFound();
        if (profile.status === 'deleted') throw profileInactive(profile, 'updated');
        if (input.base_url != null)
          validateBaseUrl(input.base_url, { allowPrivate: this.config.allowPrivateBaseUrl });
        const changes: Partial<LlmProfileRow> = {};
        if (input.api_key !== undefined) {
          changes.api_key_ciphertext = this.box.encrypt(input.api_key);
          changes.api_key_masked = maskSecret(input.api_key);
        }
        for (const field of [
          'preset_name',
          'provider',
          'model_id',
          'base_url',
          'api_key_name',
          'status',
        ] as const) {
          const value = input[field];
          if (value !== undefined && value !== profile[field])
            (changes as Record<string, unknown>)[field] = value;
        }
        if (Object.keys(changes).length === 0) return profile;
        if (changes.preset_name !== undefined) {
          await llmProfilesRepository.lockAccountNames(tx, actor.accountId);
          if (await llmProfilesRepository.findByPresetName(tx, actor.accountId, changes.preset_name))
            throw profileConflict(changes.preset_name);
        }
        const row = await llmProfilesRepository.update(tx, id, { ...changes, updated_at: Date.now() });
        await llmProfilesRepository.bumpResolutionVersion(tx, actor.accountId);
        await this.logs.write(tx, actor, {
          action: 'llm_profile.update',
          workspace_id: row.workspace_id,
          target_type: 'llm_profile',
          target_id: row.id,
          before_ref: profileRef(profile),
          after_ref: profileRef(row),
          metadata: {
            changed_fields: Object.keys(changes).filter(
              (f) => f !== 'api_key_ciphertext' && f !== 'api_key_masked',
            ),
            key_replaced: input.api_key !== undefined,
          },
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error) && input.preset_name !== undefined)
        throw profileConflict(input.preset_name);
      throw error;
    }
  }
}
