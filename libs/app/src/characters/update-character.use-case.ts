import { Inject, Injectable } from '@nestjs/common';
import { DomainError, jsonEqual, parseCharacterCard } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { charactersRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  appendCharacterVersion,
  characterNotFound,
  latestCharacterVersion,
  requireUsableLorebook,
  storedCardOf,
  type CharacterWithVersion,
  type StoredCharacterCard,
} from './character-rules';

export interface UpdateCharacterInput {
  /** Card `data` fields to replace (each replaced whole; `extensions` and `character_book` too). */
  data: Record<string, unknown>;
}

/**
 * `PATCH /characters/:id` body `{data: {...}}`: a new version (`change_kind: update`, log
 * `update_character`) whose card is the latest one with the given `data` fields replaced. The name follows
 * `data.name`. A PATCH that changes nothing writes nothing and answers the character as it is.
 */
@Injectable()
export class UpdateCharacterUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateCharacterInput): Promise<CharacterWithVersion> {
    if (Object.keys(input.data).length === 0) throw invalid('data', 'data must name at least one card field');
    for (const [field, value] of Object.entries(input.data)) {
      if (value === null && field !== 'character_book') {
        throw invalid(`data.${field}`, `data.${field} must not be null`);
      }
    }
    return inTransaction(this.db, async ({ tx }) => {
      const head = await charactersRepository.lockOfAccount(tx, actor.accountId, id);
      if (!head) throw characterNotFound();
      const latest = await latestCharacterVersion(tx, head);
      const before = storedCardOf(latest);
      const card: StoredCharacterCard = { ...before, data: checkedData({ ...before.data, ...input.data }) };
      requireUsableLorebookOrInvalid(card);
      if (jsonEqual(card.data, before.data)) return { character: head, version: latest };
      return appendCharacterVersion(tx, this.logs, actor, head, {
        action: 'update_character',
        change_kind: 'update',
        card,
        source_format: latest.source_format,
        metadata: { changed_fields: Object.keys(input.data).sort() },
      });
    });
  }
}

/** The merged data run through the card codec, so a stored card always parses; failures are 400. */
function checkedData(data: Record<string, unknown>): StoredCharacterCard['data'] {
  return asValidation(() => parseCharacterCard({ spec: 'chara_card_v2', spec_version: '2.0', data }).data);
}

function requireUsableLorebookOrInvalid(card: StoredCharacterCard): void {
  asValidation(() => requireUsableLorebook(card));
}

function asValidation<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'import_parse_error') {
      const field = (error.details as { field?: string } | undefined)?.field ?? 'data';
      throw invalid(field, error.message);
    }
    throw error;
  }
}

function invalid(field: string, message: string): DomainError {
  return new DomainError('validation_error', 400, message, { fields: [{ field, problems: [message] }] });
}
