import type { Updateable } from 'kysely';
import type { ClientRow } from './accounts.repository';
import type { Executor } from './database';
import type { ClientsTable } from './tables';

/**
 * Named queries for Clients. Every read is scoped to one account: a Client of another account is
 * simply not found. Inserting a Client is `accountsRepository.insertClient` (provisioning uses it).
 */
export const clientsRepository = {
  /** The account's Clients, the default one first, then in creation order. */
  async listClientsOfAccount(
    db: Executor,
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<ClientRow[]> {
    return db
      .selectFrom('clients')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('is_default', 'desc')
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  },

  async countClientsOfAccount(db: Executor, accountId: string): Promise<number> {
    const row = await db
      .selectFrom('clients')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async findClientOfAccount(
    db: Executor,
    accountId: string,
    clientId: string,
  ): Promise<ClientRow | undefined> {
    return db
      .selectFrom('clients')
      .selectAll()
      .where('id', '=', clientId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  },

  async updateClient(
    db: Executor,
    accountId: string,
    clientId: string,
    patch: Pick<Updateable<ClientsTable>, 'name' | 'status'> & { updated_at: number },
  ): Promise<ClientRow | undefined> {
    return db
      .updateTable('clients')
      .set(patch)
      .where('id', '=', clientId)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst();
  },
};
