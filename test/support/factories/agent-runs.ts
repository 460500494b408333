import { ID_PREFIX, newId, normaliseAgentDefaults, normaliseGrants } from '@hearth/domain';
import {
  accountsRepository,
  agentsRepository,
  inTransaction,
  jobsRepository,
  type AgentBindingRow,
  type AgentTypeRow,
  type JobRow,
  type ProjectRow,
} from '@hearth/persistence';
import { enqueueLedgerJob, JOB_DEFINITIONS } from '@hearth/platform';
import { pollUntil } from '../poll';
import type { TestApp } from '../test-app';

/**
 * Agent Types, Bindings and Agent Jobs for the worker's tests (test/e2e/agent-*.test.ts), written
 * through agentsRepository and jobsRepository as the agent routes write them: the tests are about
 * running jobs, not about the routes.
 */

let seq = 0;

/** An `active` Agent Type in the account's default Workspace; `defaults` normalised like the route does. */
export async function createAgentType(
  t: TestApp,
  accountId: string,
  options: {
    key?: string;
    name?: string;
    scopeKind?: AgentTypeRow['scope_kind'];
    status?: AgentTypeRow['status'];
    defaults?: Record<string, unknown>;
  } = {},
): Promise<AgentTypeRow> {
  const db = t.resources.database.db;
  const workspace = await accountsRepository.findDefaultWorkspace(db, accountId);
  if (!workspace) throw new Error(`account ${accountId} has no default Workspace`);
  seq += 1;
  const now = Date.now();
  const row = await inTransaction(db, ({ tx }) =>
    agentsRepository.insertType(tx, {
      id: newId(ID_PREFIX.agentType),
      workspace_id: workspace.id,
      account_id: accountId,
      key: options.key ?? `agent-${seq}`,
      name: options.name ?? `Agent ${seq}`,
      scope_kind: options.scopeKind ?? 'project',
      status: options.status ?? 'active',
      defaults: JSON.stringify(normaliseAgentDefaults(options.defaults ?? {})),
      created_at: now,
      updated_at: now,
    }),
  );
  if (!row) throw new Error('agent type key already used');
  return row;
}

/** An Agent Binding of a type in a Project (owned by the Project's account); null overrides inherit. */
export async function createAgentBinding(
  t: TestApp,
  type: AgentTypeRow,
  project: Pick<ProjectRow, 'id' | 'workspace_id' | 'account_id'>,
  options: {
    status?: AgentBindingRow['status'];
    scopeKind?: AgentBindingRow['scope_kind'];
    llmProfileId?: string | null;
    eventSubscriptions?: unknown[] | null;
    grants?: Record<string, unknown> | null;
    metadata?: Record<string, unknown>;
  } = {},
): Promise<AgentBindingRow> {
  const now = Date.now();
  return inTransaction(t.resources.database.db, ({ tx }) =>
    agentsRepository.insertBinding(tx, {
      id: newId(ID_PREFIX.agentBinding),
      workspace_id: project.workspace_id,
      project_id: project.id,
      account_id: project.account_id,
      agent_type_id: type.id,
      status: options.status ?? 'enabled',
      scope_kind: options.scopeKind ?? type.scope_kind,
      llm_profile_id: options.llmProfileId ?? null,
      tool_policy_id: null,
      mcp_bindings: null,
      event_subscriptions:
        options.eventSubscriptions === undefined || options.eventSubscriptions === null
          ? null
          : JSON.stringify(options.eventSubscriptions),
      grants:
        options.grants === undefined || options.grants === null
          ? null
          : JSON.stringify(normaliseGrants('grants', options.grants)),
      metadata: JSON.stringify(options.metadata ?? {}),
      status_reason: null,
      created_at: now,
      updated_at: now,
    }),
  );
}

/** Changes a binding's status or overrides (what PATCH and disable do to the row). */
export async function updateAgentBinding(
  t: TestApp,
  binding: AgentBindingRow,
  values: { status?: AgentBindingRow['status']; grants?: Record<string, unknown> | null },
): Promise<AgentBindingRow> {
  return inTransaction(t.resources.database.db, ({ tx }) =>
    agentsRepository.updateBinding(tx, binding.id, {
      ...(values.status ? { status: values.status } : {}),
      ...(values.grants !== undefined
        ? { grants: values.grants === null ? null : JSON.stringify(values.grants) }
        : {}),
      updated_at: Date.now(),
    }),
  );
}

export async function setAgentTypeStatus(
  t: TestApp,
  type: AgentTypeRow,
  status: AgentTypeRow['status'],
): Promise<AgentTypeRow> {
  return inTransaction(t.resources.database.db, ({ tx }) =>
    agentsRepository.updateType(tx, type.id, { status, updated_at: Date.now() }),
  );
}

export interface ManualRunOptions {
  dryRun?: boolean;
  inputJson?: Record<string, unknown>;
  triggerReason?: string | null;
  sessionId?: string;
  floorId?: string;
  /** Default: the targets the binding allows when the run is requested. */
  deliveryTargets?: string[];
  /** Default true: enqueue like the route does after commit. */
  enqueue?: boolean;
}

/**
 * A manual `agent.run` job of a binding, as `POST .../agent-bindings/:id/run` creates it: a `pending`
 * row (trigger `manual`, payload `{input_json, trigger_reason, session_id?, floor_id?}`), enqueued.
 */
export async function createManualRun(
  t: TestApp,
  binding: AgentBindingRow,
  options: ManualRunOptions = {},
): Promise<JobRow> {
  const db = t.resources.database.db;
  const type = await agentsRepository.findType(db, binding.workspace_id, binding.agent_type_id);
  const grants = (binding.grants ?? (type?.defaults as { grants?: Record<string, unknown> })?.grants) as
    { allowed_output_targets?: string[] } | undefined;
  const now = Date.now();
  const job = await jobsRepository.insertPending(db, {
    id: newId(ID_PREFIX.job),
    name: 'agent.run',
    queue: JOB_DEFINITIONS['agent.run'].queue,
    phase: null,
    account_id: binding.account_id,
    workspace_id: binding.workspace_id,
    project_id: binding.project_id,
    payload: JSON.stringify({
      input_json: options.inputJson ?? {},
      trigger_reason: options.triggerReason ?? null,
      ...(options.sessionId ? { session_id: options.sessionId } : {}),
      ...(options.floorId ? { floor_id: options.floorId } : {}),
    }),
    result: null,
    dedupe_key: null,
    max_attempts: JOB_DEFINITIONS['agent.run'].maxAttempts,
    available_at: null,
    started_at: null,
    finished_at: null,
    last_error: null,
    last_error_code: null,
    last_error_class: null,
    created_at: now,
    updated_at: now,
    agent_type_id: binding.agent_type_id,
    agent_binding_id: binding.id,
    source_event_id: null,
    trigger_type: 'manual',
    dry_run: options.dryRun ?? true,
    delivery_targets: JSON.stringify(options.deliveryTargets ?? grants?.allowed_output_targets ?? []),
  });
  if (!job) throw new Error('agent job not inserted');
  if (options.enqueue ?? true) await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', job.id);
  return job;
}

export const jobRow = async (t: TestApp, id: string): Promise<JobRow> => {
  const row = await jobsRepository.findById(t.resources.database.db, id);
  if (!row) throw new Error(`job ${id} not found`);
  return row;
};

const FINISHED = ['succeeded', 'dead_letter', 'cancelled'];

/** Polls a job row until it is finished (or `statuses`), and returns it as last read. */
export const waitForJobStatus = (t: TestApp, id: string, statuses: string[] = FINISHED, ms = 20_000) =>
  pollUntil(
    () => jobRow(t, id),
    (row) => statuses.includes(row.status),
    ms,
  );

/** The `agent.run` jobs of a binding, oldest first. */
export const jobsOfBinding = (t: TestApp, bindingId: string): Promise<JobRow[]> =>
  t.resources.database.db
    .selectFrom('jobs')
    .selectAll()
    .where('agent_binding_id', '=', bindingId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
