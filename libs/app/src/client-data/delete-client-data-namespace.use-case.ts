import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { clientDataRepository, inTransaction, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  clientDataNamespaceRef,
  requireClientDataEnabled,
  requireNamespaceWriter,
  requireNamespaceOfAccount,
} from './client-data-rules';

export interface DeletedClientDataNamespace {
  name: string;
  deleted: true;
  /** The session state writes deleted with it (on every session, floor and branch). */
  deleted_writes: number;
}

/**
 * `DELETE /client-data/namespaces/:name`: deletes the namespace and every session state write made in
 * it (the foreign key cascades; the usage trigger lowers the account's usage). The row is locked
 * first; a turn landing writes share-locks it, so the count is exact and no write lands in a deleted
 * namespace (that turn answers 404 `session_state_namespace_not_registered`).
 */
@Injectable()
export class DeleteClientDataNamespaceUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, name: string): Promise<DeletedClientDataNamespace> {
    requireClientDataEnabled(this.config);
    requireNamespaceWriter(actor);
    return inTransaction(this.db, async ({ tx }) => {
      const namespace = await requireNamespaceOfAccount(tx, actor, name, { lock: 'update' });
      const deletedWrites = await clientDataRepository.deleteNamespace(tx, namespace.id);
      await this.logs.write(tx, actor, {
        action: 'client_data_namespace.delete',
        target_type: 'client_data_namespace',
        target_id: namespace.id,
        before_ref: { ...clientDataNamespaceRef(namespace), deleted_writes: deletedWrites },
      });
      return { name: namespace.name, deleted: true as const, deleted_writes: deletedWrites };
    });
  }
}
