import { Inject, Injectable } from '@nestjs/common';
import { apiKeyPrefix, generateApiKey, hashApiKey, ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  accountsRepository,
  credentialsRepository,
  inTransaction,
  type ClientRow,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { clientRef, requireAccountActor } from './client-rules';

/**
 * `POST /clients`: a new, non-default Client under the caller's account with its first API key. The
 * key is returned once; only its hash is stored. Client, key and `create_client` log: one transaction.
 */
@Injectable()
export class CreateClientUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: { name: string }): Promise<{ client: ClientRow; apiKey: string }> {
    requireAccountActor(actor);
    return inTransaction(this.db, async ({ tx }) => {
      const now = Date.now();
      const client = await accountsRepository.insertClient(tx, {
        id: newId(ID_PREFIX.client),
        account_id: actor.accountId,
        name: input.name,
        status: 'active',
        is_default: false,
        created_at: now,
        updated_at: now,
      });
      const apiKey = generateApiKey();
      const keyId = newId(ID_PREFIX.apiKey);
      await credentialsRepository.insertKey(tx, {
        id: keyId,
        client_id: client.id,
        key_hash: hashApiKey(apiKey),
        key_prefix: apiKeyPrefix(apiKey),
        created_at: now,
      });
      await this.logs.write(tx, actor, {
        action: 'create_client',
        target_type: 'client',
        target_id: client.id,
        after_ref: clientRef(client),
        metadata: { key_record_id: keyId },
      });
      return { client, apiKey };
    });
  }
}
