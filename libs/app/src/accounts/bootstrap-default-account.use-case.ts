import { Inject, Injectable } from '@nestjs/common';
import { apiKeyPrefix, generateApiKey, hashApiKey, ID_PREFIX, newId } from '@hearth/domain';
import {
  accountsRepository,
  ADVISORY_LOCK,
  credentialsRepository,
  locksRepository,
  type Db,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { DEFAULT_ACCOUNT_ID, provisionAccount } from './account-provisioning';

export interface BootstrapResult {
  accountId: string;
  clientId: string;
  /** The generated key, only on the start that created it; null otherwise. */
  generatedApiKey: string | null;
}

/**
 * Runs at every start, idempotent: makes sure the default account (admin), its default Client and
 * Workspace exist, and that the default Client has a key: `BOOTSTRAP_ADMIN_API_KEY` when set,
 * otherwise one generated at first start and returned once so the entry point can print it.
 */
@Injectable()
export class BootstrapDefaultAccountUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(): Promise<BootstrapResult> {
    return this.db.transaction().execute(async (tx) => {
      // Serialise concurrent starts of several replicas on one database.
      await locksRepository.advisoryXactLock(tx, ADVISORY_LOCK.bootstrap);
      let account = await accountsRepository.findDefaultAccount(tx);
      if (!account) {
        account = await provisionAccount(tx, {
          id: DEFAULT_ACCOUNT_ID,
          name: 'Default account',
          role: 'admin',
          isDefault: true,
        });
      }
      const client = await accountsRepository.findDefaultClient(tx, account.id);
      if (!client) throw new Error('The default account has no default Client');

      const now = Date.now();
      let generatedApiKey: string | null = null;
      if (this.config.bootstrapAdminApiKey) {
        await credentialsRepository.insertKey(tx, {
          id: newId(ID_PREFIX.apiKey),
          client_id: client.id,
          key_hash: hashApiKey(this.config.bootstrapAdminApiKey),
          key_prefix: apiKeyPrefix(this.config.bootstrapAdminApiKey),
          created_at: now,
        });
      } else if ((await credentialsRepository.countKeysOfClient(tx, client.id)) === 0) {
        generatedApiKey = generateApiKey();
        await credentialsRepository.insertKey(tx, {
          id: newId(ID_PREFIX.apiKey),
          client_id: client.id,
          key_hash: hashApiKey(generatedApiKey),
          key_prefix: apiKeyPrefix(generatedApiKey),
          created_at: now,
        });
      }
      return { accountId: account.id, clientId: client.id, generatedApiKey };
    });
  }
}
