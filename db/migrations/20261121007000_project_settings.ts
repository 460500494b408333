import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Project settings overrides (spec 1) and what they point at: LLM profiles (spec 2; routes come with
 * issue 6), the Workspace MCP server and tool policy registries (docs/decisions.md "Settings"). The
 * override tables reference profiles, servers and policies without foreign keys (spec 1: validity is
 * checked by the service layer).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE llm_profiles (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      preset_name text NOT NULL,
      provider text NOT NULL CHECK (provider IN ('openai', 'anthropic', 'google', 'deepseek', 'xai', 'openai-compatible')),
      model_id text NOT NULL,
      base_url text,
      api_key_name text,
      api_key_ciphertext text NOT NULL,
      api_key_masked text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'disabled', 'deleted')),
      last_used_at bigint,
      deleted_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
    );
    CREATE INDEX llm_profiles_account ON llm_profiles (account_id, id);
    CREATE TABLE mcp_servers (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
      url text NOT NULL,
      status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
      tools jsonb NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX mcp_servers_workspace_name ON mcp_servers (workspace_id, name);
    CREATE TABLE tool_policies (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
      policy_json jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'archived')),
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX tool_policies_workspace_name ON tool_policies (workspace_id, name);
    CREATE TABLE project_llm_profile_overrides (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      base_profile_id text NOT NULL,
      override_json jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('active')),
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX project_llm_profile_overrides_project ON project_llm_profile_overrides (project_id);
    CREATE INDEX project_llm_profile_overrides_profile ON project_llm_profile_overrides (base_profile_id);
    CREATE TABLE project_mcp_bindings (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      mcp_server_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
      allowed_tools jsonb NOT NULL,
      config_override_json jsonb NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX project_mcp_bindings_server ON project_mcp_bindings (project_id, mcp_server_id);
    CREATE INDEX project_mcp_bindings_by_server ON project_mcp_bindings (mcp_server_id) WHERE status = 'enabled';
    CREATE TABLE project_tool_policy_overrides (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      base_policy_id text NOT NULL,
      override_json jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'archived')),
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE UNIQUE INDEX project_tool_policy_overrides_policy ON project_tool_policy_overrides (project_id, base_policy_id);
    CREATE INDEX project_tool_policy_overrides_by_policy ON project_tool_policy_overrides (base_policy_id) WHERE status = 'active';
  `,
  );
}
