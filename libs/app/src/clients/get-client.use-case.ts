import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { clientsRepository, type ClientRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { clientNotFound } from './client-rules';

/** `GET /clients/:id`: a Client of the caller's account; any other id answers 404 `not_found`. */
@Injectable()
export class GetClientUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, clientId: string): Promise<ClientRow> {
    const client = await clientsRepository.findClientOfAccount(this.db, actor.accountId, clientId);
    if (!client) throw clientNotFound();
    return client;
  }
}
