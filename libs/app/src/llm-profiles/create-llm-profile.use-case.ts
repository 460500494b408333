import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, type LlmProviderName } from '@hearth/domain';
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
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { registryWorkspace } from '../settings/workspace-registry';
import { profileConflict, profileRef } from './llm-profile-rules';

export interface CreateLlmProfileInput {
  preset_name: string;
  provider: LlmProviderName;
  model_id: string;
  api_key: string;
  base_url?: string | null;
  api_key_name?: string | null;
}

/**
 * `POST /llm-profiles`: a profile of the caller's account (in its default Workspace) with its key
 * encrypted. Checks: base_url guard (400 `ssrf_blocked`), master key (503 `secret_unavailable`), name
 * unique among the account's non-deleted profiles (409 `profile_conflict`). Logged as
 * `llm_profile.create` with the masked key only.
 */
@Injectable()
export class CreateLlmProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateLlmProfileInput): Promise<LlmProfileRow> {
    const baseUrl = input.base_url ?? null;
    if (baseUrl !== null) validateBaseUrl(baseUrl, { allowPrivate: this.config.allowPrivateBaseUrl });
    const ciphertext = this.box.encrypt(input.api_key);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const workspace = await registryWorkspace(tx, actor);
        await llmProfilesRepository.lockAccountNames(tx, actor.accountId);
        if (await llmProfilesRepository.findByPresetName(tx, actor.accountId, input.preset_name))
          throw profileConflict(input.preset_name);
        const now = Date.now();
        const row = await llmProfilesRepository.insert(tx, {
          id: newId(ID_PREFIX.llmProfile),
          account_id: actor.accountId,
          workspace_id: workspace.id,
          preset_name: input.preset_name,
          provider: input.provider,
          model_id: input.model_id,
          base_url: baseUrl,
          api_key_name: input.api_key_name ?? null,
          api_key_ciphertext: ciphertext,
          api_key_masked: maskSecret(input.api_key),
          status: 'active',
          last_used_at: null,
          deleted_at: null,
          created_at: now,
          updated_at: now,
        });
        await this.logs.write(tx, actor, {
          action: 'llm_profile.create',
          workspace_id: workspace.id,
          target_type: 'llm_profile',
          target_id: row.id,
          after_ref: profileRef(row),
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw profileConflict(input.preset_name);
      throw error;
    }
  }
}
