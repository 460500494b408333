import { DomainError, serialiseValue, validationError } from '@hearth/domain';
import type { VcTagRow } from '@hearth/persistence';

/** `name`: 1-200 characters, not blank, no NUL (checked by the DTO). */
export const VC_TAG_NAME_MAX_CHARS = 200;
/** `metadata` is any plain JSON of at most 64 KiB serialised (UTF-8 bytes). */
export const VC_TAG_METADATA_MAX_BYTES = 64 * 1024;

/**
 * A tag's `metadata`: absent or null is stored as null; anything else must be plain JSON (no NUL,
 * finite numbers, at most 128 levels) of at most 64 KiB, else 400 `validation_error`. Returns the
 * serialised value for the jsonb column, or null.
 */
export function serialiseTagMetadata(metadata: unknown): string | null {
  if (metadata === undefined || metadata === null) return null;
  const fail = (problem: string) =>
    validationError(`metadata ${problem}`, {
      fields: [{ field: 'metadata', problems: [`metadata ${problem}`] }],
    });
  try {
    return serialiseValue(metadata, VC_TAG_METADATA_MAX_BYTES).json;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'derived_output_payload_too_large')
      throw fail(`must be at most ${VC_TAG_METADATA_MAX_BYTES} bytes serialised`);
    if (error instanceof DomainError && error.code === 'derived_output_payload_invalid')
      throw fail(error.message.replace(/^value /, ''));
    throw error;
  }
}

export const vcTagNotFound = () => new DomainError('tag_not_found', 404, 'Tag not found');

export const vcTagExists = (name: string) =>
  new DomainError('tag_exists', 409, 'A tag with this name already exists', { name });

/** What an operation log keeps of a tag: never its metadata (only whether there is some). */
export const vcTagRef = (
  tag: Pick<VcTagRow, 'id' | 'name' | 'target_type' | 'target_id' | 'target_asset_kind' | 'session_id'>,
) => ({
  id: tag.id,
  name: tag.name,
  target_type: tag.target_type,
  target_id: tag.target_id,
  target_asset_kind: tag.target_asset_kind,
  session_id: tag.session_id,
});
