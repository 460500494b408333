import { Inject, Injectable } from '@nestjs/common';
import { apiKeyPrefix, generateApiKey, hashApiKey, ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { accountsRepository, credentialsRepository, inTransaction, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireAccountAdmin, visibleAccount } from './account-rules';

/**
 * `POST /accounts/:id/api-keys` (admin): a new key for the account's default Client, shown once.
 * Earlier keys stay valid. Allowed in both modes (in `single` mode for the default account only).
 */
@Injectable()
export class IssueApiKeyUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, accountId: string): Promise<{ client_id: string; api_key: string }> {
    requireAccountAdmin(actor);
    return inTransaction(this.db, async ({ tx }) => {
      // Key-share locked: an account delete running meanwhile comes first (404) or waits for the key.
      const account = visibleAccount(
        this.config,
        await accountsRepository.findAccountForKeyShare(tx, accountId),
      );
      const client = await accountsRepository.findDefaultClient(tx, account.id);
      if (!client) throw new Error(`Account ${account.id} has no default Client`);
      const apiKey = generateApiKey();
      const keyId = newId(ID_PREFIX.apiKey);
      await credentialsRepository.insertKey(tx, {
        id: keyId,
        client_id: client.id,
        key_hash: hashApiKey(apiKey),
        key_prefix: apiKeyPrefix(apiKey),
        created_at: Date.now(),
      });
      // The key itself is never logged, not even masked: only which key record was made.
      await this.logs.write(tx, actor, {
        action: 'issue_api_key',
        target_type: 'client',
        target_id: client.id,
        metadata: { target_account_id: account.id, key_record_id: keyId },
      });
      return { client_id: client.id, api_key: apiKey };
    });
  }
}
