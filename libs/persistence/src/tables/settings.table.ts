import type { Json } from './core.table';

/** An LLM profile (spec 2 "LLM Profile"); the routes come with issue 6. The plain key is never stored. */
export interface LlmProfilesTable {
  id: string;
  account_id: string;
  workspace_id: string;
  preset_name: string;
  provider: 'openai' | 'anthropic' | 'google' | 'deepseek' | 'xai' | 'openai-compatible';
  model_id: string;
  base_url: string | null;
  api_key_name: string | null;
  /** AES-256-GCM ciphertext with its key id (ARCHITECTURE.md "Secrets"). */
  api_key_ciphertext: string;
  api_key_masked: string;
  status: 'active' | 'disabled' | 'deleted';
  last_used_at: number | null;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A Workspace MCP server registry entry (docs/decisions.md "Settings"). */
export interface McpServersTable {
  id: string;
  account_id: string;
  workspace_id: string;
  name: string;
  url: string;
  status: 'enabled' | 'disabled';
  /** The server's tool catalog: unique names. */
  tools: Json<string[]>;
  created_at: number;
  updated_at: number;
}

/** A Workspace tool policy (docs/decisions.md "Settings"). */
export interface ToolPoliciesTable {
  id: string;
  account_id: string;
  workspace_id: string;
  name: string;
  policy_json: Json<{ mode: 'allow' | 'deny'; tools: string[] }>;
  status: 'active' | 'archived';
  created_at: number;
  updated_at: number;
}

/** Spec 1 "Project LLM profile override": at most one per Project. */
export interface ProjectLlmProfileOverridesTable {
  id: string;
  workspace_id: string;
  project_id: string;
  base_profile_id: string;
  override_json: Json<Record<string, unknown>>;
  status: 'active';
  created_at: number;
  updated_at: number;
}

/** Spec 1 "Project MCP binding": one per (Project, MCP server). */
export interface ProjectMcpBindingsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  mcp_server_id: string;
  status: 'enabled' | 'disabled';
  allowed_tools: Json<string[]>;
  config_override_json: Json<Record<string, unknown>>;
  created_at: number;
  updated_at: number;
}

/** Spec 1 "Project tool policy override": one per (Project, base policy). */
export interface ProjectToolPolicyOverridesTable {
  id: string;
  workspace_id: string;
  project_id: string;
  base_policy_id: string;
  override_json: Json<Record<string, unknown>>;
  status: 'active' | 'archived';
  created_at: number;
  updated_at: number;
}
