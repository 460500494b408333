import { sql, type Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Agents (spec 1 "Agent Type", "Agent Binding", "Agent Job"; docs/decisions.md "Agents").
 *
 * - `agent_types`: Workspace templates, `key` unique per Workspace; `defaults` is the normalised
 *   object of libs/domain/src/agents (every field present).
 * - `agent_bindings`: one Agent Type enabled in one Project. A null override column inherits the
 *   type's current default (`llm_profile_id`, `tool_policy_id`, `mcp_bindings`,
 *   `event_subscriptions`, `grants`); a set one may only narrow it.
 * - Agent jobs are `jobs` rows named `agent.run` with the agent columns added here.
 * - `hearth_agent_event_jobs`: every Project event written by a person or a turn (not by a job, not
 *   `internal`) creates, in the event's own transaction, one `agent.run` job per enabled binding of
 *   an active type in that Project whose effective `event_subscriptions` match it (same `type`, and
 *   the event document contains `filter_json`), deduplicated by `(binding, event)`; then notifies
 *   `hearth_agent_jobs` with the job id so a worker enqueues it at once (the reconciler does it
 *   otherwise). A Project without an enabled binding costs one index probe per event.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE agent_types (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      key text NOT NULL,
      name text NOT NULL,
      scope_kind text NOT NULL CHECK (scope_kind IN ('floor', 'session', 'project', 'workspace')),
      status text NOT NULL CHECK (status IN ('active', 'disabled')),
      defaults jsonb NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      UNIQUE (workspace_id, key)
    );

    CREATE TABLE agent_bindings (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      agent_type_id text NOT NULL REFERENCES agent_types (id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('enabled', 'disabled', 'error')),
      scope_kind text NOT NULL CHECK (scope_kind IN ('floor', 'session', 'project', 'workspace')),
      llm_profile_id text,
      tool_policy_id text,
      mcp_bindings jsonb,
      event_subscriptions jsonb,
      grants jsonb,
      metadata jsonb NOT NULL DEFAULT '{}',
      status_reason text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX agent_bindings_project ON agent_bindings (project_id, id);
    CREATE INDEX agent_bindings_type_enabled ON agent_bindings (agent_type_id) WHERE status = 'enabled';
    CREATE INDEX agent_bindings_project_enabled ON agent_bindings (project_id) WHERE status = 'enabled';

    ALTER TABLE jobs
      ADD COLUMN agent_type_id text,
      ADD COLUMN agent_binding_id text,
      ADD COLUMN source_event_id text,
      ADD COLUMN trigger_type text,
      ADD COLUMN dry_run boolean,
      ADD COLUMN delivery_targets jsonb;
    CREATE INDEX jobs_project_agent ON jobs (project_id, created_at, id) WHERE name = 'agent.run';
    CREATE INDEX jobs_agent_serial_scope ON jobs (project_id, agent_type_id)
      WHERE name = 'agent.run' AND status IN ('leased', 'running')
  `,
  );
  // Ids in Hearth's format (libs/domain/src/ids.ts): prefix, 10 base32 chars of ms time, 16 random.
  await sql
    .raw(
      `CREATE FUNCTION hearth_new_id(prefix text) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  t bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  out text := '';
BEGIN
  FOR i IN 1..10 LOOP
    out := substr(alphabet, (t % 32)::int + 1, 1) || out;
    t := t / 32;
  END LOOP;
  FOR i IN 1..16 LOOP
    out := out || substr(alphabet, floor(random() * 32)::int + 1, 1);
  END LOOP;
  RETURN prefix || '_' || out;
END
$$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE FUNCTION hearth_agent_event_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  doc jsonb;
  b record;
  now_ms bigint;
  created_id text;
BEGIN
  IF NEW.source = 'runtime_job' OR NEW.visibility = 'internal' THEN
    RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM agent_bindings WHERE project_id = NEW.project_id AND status = 'enabled') THEN
    RETURN NULL;
  END IF;
  doc := jsonb_strip_nulls(jsonb_build_object(
    'type', NEW.type, 'visibility', NEW.visibility, 'source', NEW.source,
    'actor_account_id', NEW.actor_account_id, 'actor_client_id', NEW.actor_client_id,
    'session_id', NEW.session_id, 'branch_id', NEW.branch_id, 'floor_id', NEW.floor_id,
    'page_id', NEW.page_id, 'message_id', NEW.message_id)) || jsonb_build_object('payload', NEW.payload);
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  FOR b IN
    SELECT ab.id, ab.account_id, ab.workspace_id, ab.agent_type_id, ab.scope_kind,
           COALESCE(ab.grants, t.defaults -> 'grants') AS grants
      FROM agent_bindings ab JOIN agent_types t ON t.id = ab.agent_type_id
     WHERE ab.project_id = NEW.project_id AND ab.status = 'enabled' AND t.status = 'active'
       AND EXISTS (
         SELECT 1 FROM jsonb_array_elements(COALESCE(ab.event_subscriptions, t.defaults -> 'event_subscriptions')) s
          WHERE s ->> 'type' = NEW.type
            AND (s -> 'filter_json' IS NULL OR jsonb_typeof(s -> 'filter_json') = 'null' OR doc @> (s -> 'filter_json')))
       AND (ab.scope_kind <> 'session' OR NEW.session_id IS NOT NULL)
       AND (ab.scope_kind <> 'floor' OR NEW.floor_id IS NOT NULL)
  LOOP
    created_id := NULL;
    INSERT INTO jobs (id, name, queue, status, account_id, workspace_id, project_id, payload, dedupe_key,
                      attempt_count, max_attempts, created_at, updated_at, agent_type_id, agent_binding_id,
                      source_event_id, trigger_type, dry_run, delivery_targets)
    VALUES (hearth_new_id('job'), 'agent.run', 'agent', 'pending', b.account_id, b.workspace_id, NEW.project_id,
            jsonb_strip_nulls(jsonb_build_object('input_json', '{}'::jsonb, 'trigger_reason', 'event:' || NEW.type,
              'session_id', NEW.session_id, 'floor_id', NEW.floor_id)),
            'agent.run:' || b.id || ':event:' || NEW.id,
            0, 5, now_ms, now_ms, b.agent_type_id, b.id, NEW.id, 'event', false,
            COALESCE(b.grants -> 'allowed_output_targets', '[]'::jsonb))
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id INTO created_id;
    IF created_id IS NOT NULL THEN
      PERFORM pg_notify('hearth_agent_jobs', created_id);
    END IF;
  END LOOP;
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER project_events_agent_jobs AFTER INSERT ON project_events
        FOR EACH ROW EXECUTE FUNCTION hearth_agent_event_jobs()`,
    )
    .execute(db);
}
