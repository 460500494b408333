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
}
