import { DomainError } from '@hearth/domain';
import type { AssetVersionRow, PresetRow } from '@hearth/persistence';

export const PRESET_DEFAULT_NAME = 'Unnamed Preset';
/** `asset_versions.source_format` of preset versions: ST's chat-completion preset file. */
export const PRESET_SOURCE_FORMAT = 'st_chat_completion_preset';
export const PRESET_SOURCE = 'ext_frontend';

export const presetNotFound = () => new DomainError('preset_not_found', 404, 'Preset not found');

/** A preset with its latest version and that version's content. */
export interface PresetDetail {
  preset: PresetRow;
  version: AssetVersionRow;
  data: unknown;
}

/** One version of a preset with its content. */
export interface PresetVersionDetail {
  version: AssetVersionRow;
  data: unknown;
}
