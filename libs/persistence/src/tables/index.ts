import type {
  AccountsTable,
  ApiKeysTable,
  ClientsTable,
  JobsTable,
  OperationLogsTable,
  ProjectEventCountersTable,
  ProjectEventsTable,
  ProjectMembersTable,
  ProjectsTable,
  SessionsTable,
  WorkspacesTable,
} from './core.table';

export * from './core.table';
export * from './derived-outputs.table';
export * from './inbox.table';
export * from './settings.table';
export * from './library.table';
export * from './conversation.table';

/** Every table of the Hearth database, as kysely sees it. Later features add their tables here. */
export interface Database {
  accounts: AccountsTable;
  clients: ClientsTable;
  api_keys: ApiKeysTable;
  workspaces: WorkspacesTable;
  projects: ProjectsTable;
  project_members: ProjectMembersTable;
  sessions: SessionsTable;
  project_event_counters: ProjectEventCountersTable;
  project_events: ProjectEventsTable;
  operation_logs: OperationLogsTable;
  jobs: JobsTable;
  derived_outputs: import('./derived-outputs.table').DerivedOutputsTable;
  inbox_entries: import('./inbox.table').InboxEntriesTable;
  llm_profiles: import('./settings.table').LlmProfilesTable;
  mcp_servers: import('./settings.table').McpServersTable;
  tool_policies: import('./settings.table').ToolPoliciesTable;
  project_llm_profile_overrides: import('./settings.table').ProjectLlmProfileOverridesTable;
  project_mcp_bindings: import('./settings.table').ProjectMcpBindingsTable;
  project_tool_policy_overrides: import('./settings.table').ProjectToolPolicyOverridesTable;
  asset_versions: import('./library.table').AssetVersionsTable;
  branches: import('./conversation.table').BranchesTable;
  floors: import('./conversation.table').FloorsTable;
  pages: import('./conversation.table').PagesTable;
  messages: import('./conversation.table').MessagesTable;
}
