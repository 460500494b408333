import { Inject, Injectable } from '@nestjs/common';
import { checkNamespaceDescription, namespaceChanges, type NamespaceSettings } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  clientDataRepository,
  inTransaction,
  type ClientDataNamespaceRow,
  type Db,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireSomeField } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  clientDataNamespaceRef,
  requireClientDataEnabled,
  requireNamespaceWriter,
  requireNamespaceOfAccount,
} from './client-data-rules';

export type UpdateClientDataNamespaceInput = Partial<NamespaceSettings>;

/**
 * `PATCH /client-data/namespaces/:name`: at least one of description, replay_policy, max_items,
 * max_bytes (the name is not changeable). The row is locked for the change; a PATCH that changes
 * nothing writes nothing (no log, same `updated_at`). Lowered limits apply to later writes only (a
 * write that frees space is never refused, `checkNamespaceLimits`); a new replay policy applies to
 * every later retry, of floors written before it included.
 */
@Injectable()
export class UpdateClientDataNamespaceUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    name: string,
    input: UpdateClientDataNamespaceInput,
  ): Promise<ClientDataNamespaceRow> {
    requireClientDataEnabled(this.config);
    requireNamespaceWriter(actor);
    requireSomeField(input, ['description', 'replay_policy', 'max_items', 'max_bytes']);
    checkNamespaceDescription(input.description);
    return inTransaction(this.db, async ({ tx }) => {
      const before = await requireNamespaceOfAccount(tx, actor, name, { lock: 'update' });
      const changes = namespaceChanges(before, input);
      const changed = Object.keys(changes);
      if (changed.length === 0) return before;
      const after = await clientDataRepository.updateNamespace(tx, before.id, {
        ...changes,
        updated_at: Date.now(),
      });
      await this.logs.write(tx, actor, {
        action: 'client_data_namespace.update',
        target_type: 'client_data_namespace',
        target_id: before.id,
        before_ref: clientDataNamespaceRef(before),
        after_ref: clientDataNamespaceRef(after),
        // The description is not in the refs: the changed field names say that it changed.
        metadata: { changed_fields: changed },
      });
      return after;
    });
  }
}
