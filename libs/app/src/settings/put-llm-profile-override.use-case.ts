import { Inject, Injectable } from '@nestjs/common';
import { changedSettingsFields, DomainError, ID_PREFIX, newId, requireLlmOverrideJson } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  llmProfilesRepository,
  projectSettingsRepository,
  type Db,
  type LlmProfileOverrideRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { SettingsAccess } from './settings-access';
import { SettingsJournal } from './settings-journal';

export interface PutLlmProfileOverrideInput {
  base_profile_id: string;
  /** Default `{}`; keys `provider`, `model_id`, `params` (docs/decisions.md "Settings"). */
  override_json?: unknown;
}

const FIELDS = ['base_profile_id', 'override_json', 'status'] as const;

/**
 * `PUT /projects/:id/settings/llm-profile-override` (owner): the Project's one override, upserted.
 * The base profile must be a profile of the Project owner's account: missing, deleted or of another
 * account 404 `profile_not_found`, disabled 409 `profile_disabled`. The record, its log, its event
 * and the `settings_override` mirror are one transaction; a PUT that changes nothing writes nothing.
 */
@Injectable()
export class PutLlmProfileOverrideUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: SettingsAccess,
    private readonly journal: SettingsJournal,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    input: PutLlmProfileOverrideInput,
  ): Promise<LlmProfileOverrideRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const overrideJson = requireLlmOverrideJson(input.override_json ?? {});
      const profile = await llmProfilesRepository.findUsableProfile(
        uow.tx,
        project.account_id,
        input.base_profile_id,
      );
      if (!profile) throw new DomainError('profile_not_found', 404, 'LLM profile not found');
      if (profile.status === 'disabled')
        throw new DomainError('profile_disabled', 409, 'The LLM profile is disabled');
      const previous = await projectSettingsRepository.findLlmOverride(uow.tx, project.id);
      const next = { base_profile_id: profile.id, override_json: overrideJson, status: 'active' as const };
      const changed = changedSettingsFields(previous, next, FIELDS);
      if (previous && changed.length === 0) return previous;
      const now = Date.now();
      await llmProfilesRepository.bumpResolutionVersion(uow.tx, project.account_id);
      const row = await projectSettingsRepository.upsertLlmOverride(uow.tx, {
        id: previous?.id ?? newId(ID_PREFIX.llmProfileOverride),
        workspace_id: project.workspace_id,
        project_id: project.id,
        ...next,
        override_json: JSON.stringify(overrideJson),
        created_at: now,
        updated_at: now,
      });
      await this.journal.record(uow, actor, project, {
        kind: 'llm_profile_override',
        recordId: row.id,
        key: { base_profile_id: row.base_profile_id },
        status: row.status,
        created: !previous,
        changedFields: changed,
        before: previous
          ? {
              base_profile_id: previous.base_profile_id,
              override_keys: Object.keys(previous.override_json),
              status: previous.status,
            }
          : null,
        after: {
          base_profile_id: row.base_profile_id,
          override_keys: Object.keys(row.override_json),
          status: row.status,
        },
      });
      return row;
    });
  }
}
