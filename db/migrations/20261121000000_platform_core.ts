import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/** Accounts, Clients and keys, Workspaces and Projects, sessions, the event log, operation logs, jobs. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      name text NOT NULL,
      role text NOT NULL CHECK (role IN ('admin', 'user')),
      status text NOT NULL CHECK (status IN ('active', 'disabled')),
      is_default boolean NOT NULL DEFAULT false,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX accounts_one_default ON accounts (is_default) WHERE is_default;

    CREATE TABLE clients (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'disabled')),
      is_default boolean NOT NULL DEFAULT false,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX clients_account ON clients (account_id, id);
    CREATE UNIQUE INDEX clients_one_default_per_account ON clients (account_id) WHERE is_default;

    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      client_id text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
      key_hash text NOT NULL UNIQUE,
      key_prefix text NOT NULL,
      created_at bigint NOT NULL,
      last_used_at bigint,
      revoked_at bigint
    );
    CREATE INDEX api_keys_client ON api_keys (client_id);

    CREATE TABLE workspaces (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      is_default boolean NOT NULL DEFAULT false,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX workspaces_one_default_per_account ON workspaces (account_id) WHERE is_default;

    CREATE TABLE projects (
      id text PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      kind text NOT NULL CHECK (kind IN ('session_default', 'manual')),
      status text NOT NULL CHECK (status IN ('active', 'archived')),
      settings_override jsonb,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX projects_account_status ON projects (account_id, status, id);

    CREATE TABLE project_members (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'observer', 'deriver')),
      status text NOT NULL CHECK (status IN ('active', 'removed')),
      subject_type text NOT NULL CHECK (subject_type IN ('account', 'client')),
      subject_id text NOT NULL,
      client_id text,
      created_by_account_id text,
      created_by_client_id text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX project_members_one_active_role
      ON project_members (project_id, subject_type, subject_id) WHERE status = 'active';
    CREATE INDEX project_members_subject ON project_members (subject_type, subject_id, status);

    CREATE TABLE sessions (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      title text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'archived')),
      character_id text,
      character_version_id text,
      user_card_id text,
      preset_id text,
      worldbook_ids jsonb NOT NULL DEFAULT '[]',
      regex_profile_id text,
      created_by_client_id text,
      archived_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX sessions_account ON sessions (account_id, id);
    CREATE INDEX sessions_project_status ON sessions (project_id, status, id);

    CREATE TABLE project_event_counters (
      project_id text PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
      last_sequence bigint NOT NULL
    );

    CREATE TABLE project_events (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      sequence bigint NOT NULL,
      type text NOT NULL,
      visibility text NOT NULL CHECK (visibility IN ('project', 'owner', 'internal')),
      source text NOT NULL CHECK (source IN ('api', 'runtime_job', 'migration', 'system')),
      actor_account_id text,
      actor_client_id text,
      session_id text,
      branch_id text,
      floor_id text,
      page_id text,
      message_id text,
      operation_log_id text,
      correlation_id text,
      causation_event_id text,
      payload jsonb NOT NULL,
      created_at bigint NOT NULL,
      UNIQUE (project_id, sequence)
    );
    CREATE INDEX project_events_session ON project_events (project_id, session_id, sequence);

    CREATE TABLE operation_logs (
      id text PRIMARY KEY,
      account_id text,
      actor_type text,
      actor_id text,
      actor_account_id text,
      operation_group_id text,
      request_id text,
      workspace_id text,
      project_id text,
      source_type text,
      action text NOT NULL,
      status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'denied', 'cancelled')),
      session_id text,
      branch_id text,
      floor_id text,
      run_id text,
      target_type text,
      target_id text,
      before_ref jsonb,
      after_ref jsonb,
      diff jsonb,
      metadata jsonb,
      created_at bigint NOT NULL
    );
    CREATE INDEX operation_logs_account_time ON operation_logs (account_id, created_at, id);
    CREATE INDEX operation_logs_session ON operation_logs (session_id) WHERE session_id IS NOT NULL;
    CREATE INDEX operation_logs_floor ON operation_logs (floor_id) WHERE floor_id IS NOT NULL;

    CREATE TABLE jobs (
      id text PRIMARY KEY,
      name text NOT NULL,
      queue text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'leased', 'running', 'retry_waiting', 'succeeded', 'dead_letter', 'cancelled')),
      phase text,
      account_id text,
      workspace_id text,
      project_id text,
      payload jsonb NOT NULL,
      result jsonb,
      dedupe_key text UNIQUE,
      attempt_count integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      available_at bigint,
      started_at bigint,
      finished_at bigint,
      last_error text,
      last_error_code text,
      last_error_class text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX jobs_status_available ON jobs (status, available_at) WHERE status IN ('pending', 'retry_waiting', 'leased', 'running');
    CREATE INDEX jobs_project ON jobs (project_id, name, created_at);
  `,
  );
}
