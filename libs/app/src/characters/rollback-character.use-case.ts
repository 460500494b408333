import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { charactersRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  appendCharacterVersion,
  characterNotFound,
  requireCharacterVersion,
  storedCardOf,
  type CharacterWithVersion,
} from './character-rules';

/**
 * `POST /characters/:id/rollback` body `{version_id}`: a new version (`change_kind: rollback`) whose card
 * equals that version's, logged `rollback_character`. Earlier versions are never changed.
 */
@Injectable()
export class RollbackCharacterUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, versionId: string): Promise<CharacterWithVersion> {
    return inTransaction(this.db, async ({ tx }) => {
      const head = await charactersRepository.lockOfAccount(tx, actor.accountId, id);
      if (!head) throw characterNotFound();
      const target = await requireCharacterVersion(tx, head, versionId);
      return appendCharacterVersion(tx, this.logs, actor, head, {
        action: 'rollback_character',
        change_kind: 'rollback',
        card: storedCardOf(target),
        source_format: target.source_format,
        metadata: { from_version_id: target.id, from_version_no: target.version_no },
      });
    });
  }
}
