import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * User cards (spec 3 "User card", the persona of a session). `name` mirrors `snapshot.name`; names are
 * unique per account among cards that are not deleted (a soft-deleted card frees its name). `revision`
 * is the compare-and-set counter of `expected_revision`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE user_cards (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'disabled', 'deleted')),
      snapshot jsonb NOT NULL,
      revision integer NOT NULL CHECK (revision >= 1),
      deleted_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
    );
    CREATE UNIQUE INDEX user_cards_account_name ON user_cards (account_id, name) WHERE deleted_at IS NULL;
    CREATE INDEX user_cards_account ON user_cards (account_id, updated_at, id);
  `,
  );
}
