import { sql, type Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The history revision of a session (docs/decisions.md "Turn history cache"): an append-only row in
 * `session_history_edits` for every change that other transactions could have seen to the content of
 * a committed floor: a page or message of a committed floor inserted, updated or deleted, and any
 * update or delete of a committed floor row. Left out: writes to a floor that is `generating` (a turn's
 * own input and output pages) and to a floor whose row this transaction wrote (inserted, or committed
 * from `generating`: its content was never visible as committed; a committed floor row updated here
 * already counted), so a chat that only grows, and an import, keep their revision. A turn reads
 * `max(edit_id)` of its session with its branch and caches the committed floors' messages under it;
 * an edit, swipe, retry, hide or branch-visible change makes a new revision.
 *
 * Rows, not a counter column: an insert takes no lock another writer waits for, so the triggers add
 * no lock ordering to the transactions that edit a chat. No foreign key to `sessions`: the triggers
 * also fire while a session's floors are deleted with it, when a reference could not be checked; the
 * rows of a deleted session are never read again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE session_history_edits (
      edit_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      session_id text NOT NULL
    );
    CREATE INDEX session_history_edits_session ON session_history_edits (session_id, edit_id)
  `,
  );
  // plpgsql bodies hold semicolons at line ends: each function is one statement of its own.
  await sql
    .raw(
      `CREATE FUNCTION hearth_note_history_edit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record;
BEGIN
  IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
  IF EXISTS (SELECT 1 FROM floors WHERE id = changed.floor_id AND state = 'committed'
             AND NOT (xmin = pg_current_xact_id()::xid)) THEN
    INSERT INTO session_history_edits (session_id) VALUES (changed.session_id);
  END IF;
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE FUNCTION hearth_note_floor_history_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.state = 'committed' THEN
    INSERT INTO session_history_edits (session_id) VALUES (OLD.session_id);
  END IF;
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  await runStatements(
    db,
    `
    CREATE TRIGGER messages_history_edit AFTER INSERT OR UPDATE OR DELETE ON messages
      FOR EACH ROW EXECUTE FUNCTION hearth_note_history_edit();
    CREATE TRIGGER pages_history_edit AFTER INSERT OR UPDATE OR DELETE ON pages
      FOR EACH ROW EXECUTE FUNCTION hearth_note_history_edit();
    CREATE TRIGGER floors_history_edit AFTER UPDATE OR DELETE ON floors
      FOR EACH ROW EXECUTE FUNCTION hearth_note_floor_history_edit()
  `,
  );
}
