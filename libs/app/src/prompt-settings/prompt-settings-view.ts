import type { SessionPromptSettingsRow } from '@hearth/persistence';
import {
  effectivePromptSettings,
  PROMPT_SETTING_FIELDS,
  storedSettings,
  type PromptSettingsValues,
  type StoredPromptSettings,
} from './prompt-settings-rules';

/** `GET`/`PUT /sessions/:id/prompt-runtime/mode` answer (docs/decisions.md "Prompt settings"). */
export interface PromptSettingsView {
  session_id: string;
  /** What the session wrote (null / absent lorebook keys: not set). */
  settings: StoredPromptSettings;
  /** What a turn of this session uses: the written value, else SillyTavern's shipped default. */
  effective: PromptSettingsValues;
  /** Per dotted field of `effective`: `session` (written) or `default`. */
  sources: Record<string, 'session' | 'default'>;
  /** 0 when never written; +1 on every write that changes something. */
  version: number;
  updated_at: number | null;
  updated_by: string | null;
}

export function toPromptSettingsView(
  sessionId: string,
  row: SessionPromptSettingsRow | null | undefined,
): PromptSettingsView {
  const settings = storedSettings(row);
  const effective = effectivePromptSettings(settings);
  const sources: Record<string, 'session' | 'default'> = {};
  for (const f of PROMPT_SETTING_FIELDS) sources[f] = settings[f] !== null ? 'session' : 'default';
  for (const key of Object.keys(effective.lorebook))
    sources[`lorebook.${key}`] = key in settings.lorebook ? 'session' : 'default';
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
