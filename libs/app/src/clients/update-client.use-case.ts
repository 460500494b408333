import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  clientsRepository,
  inTransaction,
  type ClientRow,
  type CredentialCache,
  type Db,
} from '@hearth/persistence';
import { CREDENTIALS, DB } from '@hearth/platform';
import { requireSomeField } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { clientNotFound, clientRef, requireAccountActor } from './client-rules';

export interface UpdateClientInput {
  name?: string;
  status?: 'active' | 'disabled';
}

/**
 * `PATCH /clients/:id`: rename, disable or re-enable a Client of the caller's account. The default
 * Client cannot be disabled (409 `client_protected`): it is how the account reaches the service.
 * After the commit the process's key cache is dropped, so its next request sees the new status.
 */
@Injectable()
export class UpdateClientUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CREDENTIALS) private readonly credentials: CredentialCache,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, clientId: string, input: UpdateClientInput): Promise<ClientRow> {
    requireAccountActor(actor);
    requireSomeField(input, ['name', 'status']);
    const updated = await inTransaction(this.db, async ({ tx }) => {
      const before = await clientsRepository.findClientOfAccount(tx, actor.accountId, clientId);
      if (!before) throw clientNotFound();
      if (before.is_default && input.status === 'disabled') {
        throw new DomainError('client_protected', 409, 'The default Client cannot be disabled');
      }
      const after = await clientsRepository.updateClient(tx, actor.accountId, clientId, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
        updated_at: Date.now(),
      });
      if (!after) throw clientNotFound();
      await this.logs.write(tx, actor, {
        action: 'update_client',
        target_type: 'client',
        target_id: clientId,
        before_ref: clientRef(before),
        after_ref: clientRef(after),
      });
      return after;
    });
    this.credentials.invalidate();
    return updated;
  }
}
