import { Inject, Injectable } from '@nestjs/common';
import {
  ID_PREFIX,
  checkNamespaceCount,
  checkNamespaceDescription,
  checkNamespaceNameFree,
  namespaceSettings,
  newId,
  type NamespaceSettings,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  clientDataRepository,
  inTransaction,
  isUniqueViolation,
  type ClientDataNamespaceRow,
  type Db,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireLiveAccount } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  clientDataNamespaceConflict,
  clientDataNamespaceRef,
  requireClientDataEnabled,
  requireNamespaceWriter,
} from './client-data-rules';

export interface CreateClientDataNamespaceInput extends Partial<NamespaceSettings> {
  /** Matches CLIENT_DATA_LIMITS.namespaceName (the request schema checks it). */
  name: string;
}

/**
 * `POST /client-data/namespaces`: registers a namespace of the caller's account, with its
 * `client_data_namespace.create` log. A public namespace's name is 409 `client_data_namespace_reserved`;
 * a name the account already has is 409 `client_data_namespace_conflict` (the unique index decides,
 * so concurrent registrations of one name get one row); past 100 namespaces, 409
 * `client_data_namespace_limit_exceeded`.
 */
@Injectable()
export class CreateClientDataNamespaceUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateClientDataNamespaceInput): Promise<ClientDataNamespaceRow> {
    requireClientDataEnabled(this.config);
    requireNamespaceWriter(actor);
    checkNamespaceNameFree(input.name);
    checkNamespaceDescription(input.description);
    const settings = namespaceSettings(input);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        // The account first (as its delete locks it), then its usage row, which orders concurrent
        // registrations, so the count below is exact.
        await requireLiveAccount(tx, actor.accountId);
        await clientDataRepository.lockUsage(tx, actor.accountId);
        const registered = await clientDataRepository.countNamespaces(tx, actor.accountId);
        checkNamespaceCount(registered, 1);
        const now = Date.now();
        const row = await clientDataRepository.insertNamespace(tx, {
          id: newId(ID_PREFIX.clientDataNamespace),
          account_id: actor.accountId,
          name: input.name,
          ...settings,
          created_by_client_id: actor.clientId,
          created_at: now,
          updated_at: now,
        });
        await this.logs.write(tx, actor, {
          action: 'client_data_namespace.create',
          target_type: 'client_data_namespace',
          target_id: row.id,
          after_ref: clientDataNamespaceRef(row),
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw clientDataNamespaceConflict(input.name);
      throw error;
    }
  }
}
