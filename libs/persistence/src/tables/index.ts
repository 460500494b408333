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
export * from './presets.table';
export * from './user-cards.table';
export * from './vc-tags.table';
export * from './worldbooks.table';
export * from './characters.table';
export * from './prompt-runtime.table';
export * from './llm-bindings.table';
export * from './variables.table';
export * from './generation-runs.table';
export * from './chat-transfer.table';
export * from './session-prompt-settings.table';
export * from './agents.table';
export * from './temporary-conversations.table';
export * from './node-graphs.table';
export * from './backup.table';
export * from './client-data.table';

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
  agent_types: import('./agents.table').AgentTypesTable;
  agent_bindings: import('./agents.table').AgentBindingsTable;
  temporary_conversations: import('./temporary-conversations.table').TemporaryConversationsTable;
  page_staged_writes: import('./temporary-conversations.table').PageStagedWritesTable;
  derived_outputs: import('./derived-outputs.table').DerivedOutputsTable;
  inbox_entries: import('./inbox.table').InboxEntriesTable;
  node_graphs: import('./node-graphs.table').NodeGraphsTable;
  client_data_namespaces: import('./client-data.table').ClientDataNamespacesTable;
  session_state_mutations: import('./client-data.table').SessionStateMutationsTable;
  client_data_usage: import('./client-data.table').ClientDataUsageTable;
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
  floor_lines: import('./conversation.table').FloorLinesTable;
  presets: import('./presets.table').PresetsTable;
  regex_profiles: import('./presets.table').RegexProfilesTable;
  asset_version_files: import('./presets.table').AssetVersionFilesTable;
  user_cards: import('./user-cards.table').UserCardsTable;
  vc_tags: import('./vc-tags.table').VcTagsTable;
  worldbooks: import('./worldbooks.table').WorldbooksTable;
  worldbook_entries: import('./worldbooks.table').WorldbookEntriesTable;
  characters: import('./characters.table').CharactersTable;
  prompt_policies: import('./prompt-runtime.table').PromptPoliciesTable;
  prompt_injections: import('./prompt-runtime.table').PromptInjectionsTable;
  llm_profile_bindings: import('./llm-bindings.table').LlmProfileBindingsTable;
  llm_resolution_versions: import('./llm-resolution-versions.table').LlmResolutionVersionsTable;
  variables: import('./variables.table').VariablesTable;
  variable_tombstones: import('./variables.table').VariableTombstonesTable;
  variable_staged_writes: import('./variables.table').VariableStagedWritesTable;
  variable_promotions: import('./variables.table').VariablePromotionsTable;
  floor_variable_snapshots: import('./variables.table').FloorVariableSnapshotsTable;
  generation_runs: import('./generation-runs.table').GenerationRunsTable;
  generation_run_events: import('./generation-runs.table').GenerationRunEventsTable;
  floor_prompt_snapshots: import('./floor-prompt-snapshots.table').FloorPromptSnapshotsTable;
  chat_transfer_sessions: import('./chat-transfer.table').ChatTransferSessionsTable;
  chat_transfer_jobs: import('./chat-transfer.table').ChatTransferJobsTable;
  chat_transfer_artifacts: import('./chat-transfer.table').ChatTransferArtifactsTable;
  session_prompt_settings: import('./session-prompt-settings.table').SessionPromptSettingsTable;
  backup_jobs: import('./backup.table').BackupJobsTable;
  backup_artifacts: import('./backup.table').BackupArtifactsTable;
}
