import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson, DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { inTransaction, sessionPromptSettingsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  promptRuntimeLogScope,
  promptRuntimeWriterId,
  requirePromptRuntimeTarget,
} from '../prompt-runtime/prompt-runtime-access';
import {
  applyPromptSettingsPatch,
  changedPromptSettings,
  checkPromptSettingsPut,
  storedSettings,
} from './prompt-settings-rules';
import { sessionPersonaPlacement } from './persona-placement';
import { toPromptSettingsView, type PromptSettingsView } from './prompt-settings-view';

export type PutPromptSettingsInput = Record<string, unknown> & { expected_version?: number };

/**
 * `PUT /sessions/:id/prompt-runtime/mode`: partial, like the policy PATCH — a field sent sets it, `null`
 * resets it to the default, an absent field stays; `lorebook` and `authors_note` merge key by key (`null`
 * resets a key, a `null` object resets them all). Owner only (`project.session.write`); the session row is locked, so
 * concurrent writes apply one after another; `expected_version` guards against a stale writer (409
 * `prompt_settings_conflict`). A write that changes nothing writes nothing; a change logs
 * `update_prompt_settings` (versions and field names, never values of free text).
 */
@Injectable()
export class PutPromptSettingsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, sessionId: string, input: PutPromptSettingsInput): Promise<PromptSettingsView> {
    const patch = checkPromptSettingsPut(input);
    return inTransaction(this.db, async ({ tx }) => {
      const target = await requirePromptRuntimeTarget(this.access, tx, actor, sessionId, null, 'write');
      const before = await sessionPromptSettingsRepository.find(tx, target.session.id);
      const card = await sessionPersonaPlacement(tx, target.session);
      const currentVersion = before?.version ?? 0;
      if (input.expected_version !== undefined && input.expected_version !== currentVersion) {
        throw new DomainError(
          'prompt_settings_conflict',
          409,
          `The prompt settings are at version ${currentVersion}, not ${input.expected_version}; read them and try again`,
          { expected_version: input.expected_version, current_version: currentVersion },
        );
      }
      const stored = storedSettings(before);
      const next = applyPromptSettingsPatch(stored, patch);
      const changed = changedPromptSettings(stored, next);
      if (changed.length === 0 || canonicalJson(next) === canonicalJson(stored))
        return toPromptSettingsView(target.session.id, before, card);
      const now = Date.now();
      const values = {
        prompt_mode: next.prompt_mode,
        macro_engine: next.macro_engine,
        post_processing: next.post_processing,
        timezone: next.timezone,
        persona_position: next.persona_position,
        persona_depth: next.persona_depth,
        persona_role: next.persona_role,
        lorebook_settings: JSON.stringify(next.lorebook),
        authors_note: JSON.stringify(next.authors_note),
        updated_at: now,
        updated_by: promptRuntimeWriterId(actor),
      };
      const row = before
        ? await sessionPromptSettingsRepository.update(tx, target.session.id, {
            ...values,
            version: before.version + 1,
          })
        : await sessionPromptSettingsRepository.insert(tx, {
            ...values,
            session_id: target.session.id,
            account_id: target.session.account_id,
            version: 1,
          });
      await this.logs.write(tx, actor, {
        action: 'update_prompt_settings',
        ...promptRuntimeLogScope(target),
        target_type: 'session_prompt_settings',
        target_id: target.session.id,
        before_ref: { version: currentVersion },
        after_ref: { version: row.version },
        metadata: { changed_fields: changed },
      });
      return toPromptSettingsView(target.session.id, row, card);
    });
  }
}
