import type { PersonaPlacement } from '@hearth/domain';
import type { SessionPromptSettingsRow } from '@hearth/persistence';
import {
  effectivePromptSettings,
  PROMPT_SETTING_FIELDS,
  promptSettingSource,
  storedSettings,
  type PromptSettingsValues,
  type StoredPromptSettings,
} from './prompt-settings-rules';

/** Where an effective value comes from: written on the session, the session's user card, or the default. */
export type PromptSettingSource = 'session' | 'user_card' | 'default';

/** `GET`/`PUT /sessions/:id/prompt-runtime/mode` answer (docs/decisions.md "Prompt settings"). */
export interface PromptSettingsView {
  session_id: string;
  /** What the session wrote (null / absent object keys: not set). */
  settings: StoredPromptSettings;
  /**
   * What a turn of this session uses: the written value, else (persona placement only) the user card's,
   * else SillyTavern's shipped default.
   */
  effective: PromptSettingsValues;
  /** Per dotted field of `effective`: `session` (written), `user_card` (persona fields only) or `default`. */
  sources: Record<string, PromptSettingSource>;
  /** 0 when never written; +1 on every write that changes something. */
  version: number;
  updated_at: number | null;
  updated_by: string | null;
}

/** `card`: the placement the session's user card carries (`personaPlacementOfSnapshot`), `{}` without one. */
export function toPromptSettingsView(
  sessionId: string,
  row: SessionPromptSettingsRow | null | undefined,
  card: PersonaPlacement = {},
): PromptSettingsView {
  const settings = storedSettings(row);
  const effective = effectivePromptSettings(settings, card);
  const sources: Record<string, PromptSettingSource> = {};
  for (const f of PROMPT_SETTING_FIELDS) sources[f] = promptSettingSource(settings, card, f);
  for (const key of Object.keys(effective.lorebook))
    sources[`lorebook.${key}`] = key in settings.lorebook ? 'session' : 'default';
  for (const key of Object.keys(effective.authors_note))
    sources[`authors_note.${key}`] = key in settings.authors_note ? 'session' : 'default';
  return {
    session_id: sessionId,
    settings,
    effective,
    sources,
    version: row?.version ?? 0,
    updated_at: row?.updated_at ?? null,
    updated_by: row?.updated_by ?? null,
  };
}
