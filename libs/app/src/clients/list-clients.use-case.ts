import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { clientsRepository, type ClientRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';

export interface ClientList {
  items: ClientRow[];
  total: number;
  limit: number;
  offset: number;
}

/** `GET /clients`: the Clients of the caller's account, the default one first. */
@Injectable()
export class ListClientsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, page: { limit: number; offset: number }): Promise<ClientList> {
    const [items, total] = await Promise.all([
      clientsRepository.listClientsOfAccount(this.db, actor.accountId, page),
      clientsRepository.countClientsOfAccount(this.db, actor.accountId),
    ]);
    return { items, total, ...page };
  }
}
