import { sql, type Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Credential-change notifications (docs/decisions.md "API-key cache"): every statement that changes
 * or deletes what an authenticated request reads of its key (an account's status or role; a Client's
 * status, default flag or account; an API key's hash, Client or revocation) sends a notification on
 * `hearth_credentials` when its transaction commits, whichever process or tool ran it. The API
 * processes LISTEN on it and drop their cached key lookups. Inserts need none: only found keys are
 * cached. Statement-level triggers: one notification per statement (Postgres folds repeats within a
 * transaction), also for rows deleted by a cascade.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `CREATE FUNCTION hearth_notify_credential_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hearth_credentials', TG_TABLE_NAME);
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  await runStatements(
    db,
    `
    CREATE TRIGGER accounts_credential_change AFTER UPDATE OF status, role OR DELETE OR TRUNCATE ON accounts
      FOR EACH STATEMENT EXECUTE FUNCTION hearth_notify_credential_change();
    CREATE TRIGGER clients_credential_change AFTER UPDATE OF status, is_default, account_id OR DELETE OR TRUNCATE ON clients
      FOR EACH STATEMENT EXECUTE FUNCTION hearth_notify_credential_change();
    CREATE TRIGGER api_keys_credential_change AFTER UPDATE OF key_hash, client_id, revoked_at OR DELETE OR TRUNCATE ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION hearth_notify_credential_change()
  `,
  );
}
