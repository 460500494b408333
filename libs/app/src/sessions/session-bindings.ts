import { DomainError } from '@hearth/domain';
import {
  assetVersionsRepository,
  charactersRepository,
  presetsRepository,
  regexProfilesRepository,
  userCardsRepository,
  worldbooksRepository,
  type Executor,
} from '@hearth/persistence';
import type { SessionBindingsInput } from './session-access';

const notFound = (code: string, what: string, id: string) =>
  new DomainError(code, 404, `${what} ${id} not found`, { id });

/**
 * Checks the library assets a session is bound to (CONTRACT.md "Sessions"; docs/decisions.md "Sessions and
 * Projects"): each id must name a live asset of the account that owns the session's Project, else 404 with
 * the asset's code. A character without a version is pinned to its latest version; a version without a
 * character brings its character; clearing the character clears the version. Returns the binding fields
 * to write (only those the input touches).
 */
export async function resolveSessionBindings(
  db: Executor,
  accountId: string,
  input: SessionBindingsInput,
): Promise<SessionBindingsInput> {
  const out: SessionBindingsInput = {};
  const characterTouched = input.character_id !== undefined || input.character_version_id !== undefined;
  if (characterTouched) {
    if (input.character_id === null) {
      out.character_id = null;
      out.character_version_id = null;
    } else if (input.character_id !== undefined) {
      const character = await charactersRepository.findOfAccount(db, accountId, input.character_id);
      if (!character) throw notFound('character_not_found', 'Character', input.character_id);
      out.character_id = character.id;
      if (input.character_version_id != null) {
        const version = await assetVersionsRepository.findOfAsset(
          db,
          character.id,
          input.character_version_id,
        );
        if (!version)
          throw notFound('character_version_not_found', 'Character version', input.character_version_id);
        out.character_version_id = version.id;
      } else {
        out.character_version_id = character.latest_version_id;
      }
    } else if (input.character_version_id === null) {
      out.character_version_id = null;
    } else if (input.character_version_id !== undefined) {
      const version = await assetVersionsRepository.findOfAccount(
        db,
        accountId,
        input.character_version_id,
        'character',
      );
      if (!version)
        throw notFound('character_version_not_found', 'Character version', input.character_version_id);
      const character = await charactersRepository.findOfAccount(db, accountId, version.asset_id);
      if (!character) throw notFound('character_not_found', 'Character', version.asset_id);
      out.character_id = character.id;
      out.character_version_id = version.id;
    }
  }
  if (input.user_card_id !== undefined) {
    if (
      input.user_card_id !== null &&
      !(await userCardsRepository.findLive(db, accountId, input.user_card_id))
    )
      throw notFound('user_card_not_found', 'User card', input.user_card_id);
    out.user_card_id = input.user_card_id;
  }
  if (input.preset_id !== undefined) {
    if (input.preset_id !== null && !(await presetsRepository.findOfAccount(db, accountId, input.preset_id)))
      throw notFound('preset_not_found', 'Preset', input.preset_id);
    out.preset_id = input.preset_id;
  }
  if (input.regex_profile_id !== undefined) {
    if (
      input.regex_profile_id !== null &&
      !(await regexProfilesRepository.findOfAccount(db, accountId, input.regex_profile_id))
    )
      throw notFound('regex_profile_not_found', 'Regex profile', input.regex_profile_id);
    out.regex_profile_id = input.regex_profile_id;
  }
  if (input.worldbook_ids !== undefined) {
    for (const id of input.worldbook_ids) {
      if (!(await worldbooksRepository.findOfAccount(db, accountId, id)))
        throw notFound('worldbook_not_found', 'Worldbook', id);
    }
    out.worldbook_ids = input.worldbook_ids;
  }
  return out;
}
