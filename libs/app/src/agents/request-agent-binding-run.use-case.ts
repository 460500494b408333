import { Inject, Injectable } from '@nestjs/common';
import {
  agentRunDedupeKey,
  DomainError,
  effectiveAgentConfig,
  requireAgentJsonObject,
  storedAgentDefaults,
  validationError,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  derivedOutputSourcesRepository,
  inTransaction,
  sessionsRepository,
  type AgentBindingRow,
  type Db,
  type ProjectRow,
  type Tx,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { CreateJobUseCase } from '../jobs/create-job.use-case';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { AgentProjectAccess, lockBindingWithType } from './agent-access';
import { agentBindingLog, bindingSettings } from './agent-binding-fields';

export interface AgentBindingRunInput {
  /** Default null; at most 500 characters (checked by the route). */
  trigger_reason?: string | null;
  /** Default true: the run writes nothing. */
  dry_run?: boolean;
  /** Default `{}`; at most 64 KiB. `session_id` / `floor_id` place a session- or floor-scoped run. */
  input_json?: unknown;
  /** The `Idempotency-Key` header: a repeat returns the first job (`created: false`). */
  idempotency_key?: string;
}

export interface AgentBindingRunAccepted {
  job_id: string;
  created: boolean;
  agent_binding_id: string;
  dedupe_key: string | null;
}

/** The `Idempotency-Key` header of a manual run: 1-200 characters. */
export const IDEMPOTENCY_KEY_MAX_CHARS = 200;

const fieldError = (field: string, problem: string) =>
  validationError(`${field}: ${problem}`, { fields: [{ field, problems: [problem] }] });

const requireInputJson = (value: unknown): Record<string, unknown> =>
  value === undefined || value === null ? {} : requireAgentJsonObject('input_json', value);

function optionalIdField(input: Record<string, unknown>, field: 'session_id' | 'floor_id'): string | null {
  const value = input[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > 200)
    throw fieldError(`input_json.${field}`, 'must be a non-empty string');
  return value;
}

/**
 * Where a run is placed (docs/decisions.md "Agents"): a writing run of a `session`-scoped binding
 * needs `input_json.session_id`, of a `floor`-scoped one `input_json.floor_id` (missing: 400); a dry
 * run (the default, spec 1: the run body is optional) may omit them and plans without that session
 * or floor. Given ids are
 * checked for any scope: the session must be a (standard) session of this Project (else 404
 * `session_not_found`), the floor of one, and of the given session when both are given (else 404
 * `floor_not_found`): a temporary conversation's session and floors read as missing. The floor's
 * session becomes the run's session.
 */
async function runPlacement(
  tx: Tx,
  project: ProjectRow,
  binding: AgentBindingRow,
  input: Record<string, unknown>,
  dryRun: boolean,
): Promise<{ session_id?: string; floor_id?: string }> {
  let sessionId = optionalIdField(input, 'session_id');
  const floorId = optionalIdField(input, 'floor_id');
  if (!dryRun && binding.scope_kind === 'session' && sessionId === null)
    throw fieldError(
      'input_json.session_id',
      'a writing run of a session-scoped binding runs on a session of the Project',
    );
  if (!dryRun && binding.scope_kind === 'floor' && floorId === null)
    throw fieldError(
      'input_json.floor_id',
      'a writing run of a floor-scoped binding runs on a floor of the Project',
    );
  if (sessionId !== null) {
    const session = await sessionsRepository.findSession(tx, sessionId);
    if (!session || session.project_id !== project.id)
      throw new DomainError('session_not_found', 404, 'Session not found in this Project');
  }
  if (floorId !== null) {
    const floor = await derivedOutputSourcesRepository.findFloorScope(tx, floorId);
    if (!floor || floor.project_id !== project.id || (sessionId !== null && floor.session_id !== sessionId))
      throw new DomainError('floor_not_found', 404, 'Floor not found in this Project');
    sessionId = floor.session_id;
  }
  return {
    ...(sessionId !== null ? { session_id: sessionId } : {}),
    ...(floorId !== null ? { floor_id: floorId } : {}),
  };
}

/**
 * `POST /projects/:id/agent-bindings/:binding_id/run` (`project.agent.run`, 202): creates an
 * `agent.run` job (trigger `manual`) for an `enabled` binding (else 409 `binding_disabled`) of an
 * active type (else 409 `agent_type_disabled`). The job's delivery targets are the binding's
 * effective `allowed_output_targets`. With an Idempotency-Key the dedupe key is
 * `agent.run:<binding>:manual:<key>` and a repeat answers the first job with `created: false`
 * (nothing written); without one every run creates a job. The job and its `agent_binding.run` log
 * are one transaction; the job is enqueued after commit and stays `pending` while no worker
 * consumes the `agent` queue.
 */
@Injectable()
export class RequestAgentBindingRunUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
    private readonly createJob: CreateJobUseCase,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    bindingId: string,
    input: AgentBindingRunInput,
  ): Promise<AgentBindingRunAccepted> {
    const inputJson = requireInputJson(input.input_json);
    const key = input.idempotency_key;
    if (key !== undefined && (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX_CHARS))
      throw fieldError('Idempotency-Key', `must be 1-${IDEMPOTENCY_KEY_MAX_CHARS} characters`);
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.agent.run', uow.tx);
      const { binding, type } = await lockBindingWithType(uow.tx, project.id, bindingId, 'share');
      if (binding.status !== 'enabled')
        throw new DomainError('binding_disabled', 409, `The Agent Binding is ${binding.status}`, {
          status: binding.status,
          status_reason: binding.status_reason,
        });
      if (type.status !== 'active')
        throw new DomainError('agent_type_disabled', 409, 'The Agent Type is disabled');
      const dryRun = input.dry_run ?? true;
      const placement = await runPlacement(uow.tx, project, binding, inputJson, dryRun);
      const effective = effectiveAgentConfig(storedAgentDefaults(type.defaults), bindingSettings(binding));
      const dedupeKey = key === undefined ? null : agentRunDedupeKey(binding.id, { idempotencyKey: key });
      const triggerReason = input.trigger_reason ?? null;
      const { job, created } = await this.createJob.execute(uow, {
        name: 'agent.run',
        account_id: project.account_id,
        workspace_id: project.workspace_id,
        project_id: project.id,
        payload: { input_json: inputJson, trigger_reason: triggerReason, ...placement },
        dedupe_key: dedupeKey,
        agent_type_id: type.id,
        agent_binding_id: binding.id,
        source_event_id: null,
        trigger_type: 'manual',
        dry_run: dryRun,
        delivery_targets: effective.allowed_output_targets,
      });
      if (created)
        await this.logs.write(
          uow.tx,
          actor,
          agentBindingLog('agent_binding.run', binding, {
            metadata: {
              job_id: job.id,
              agent_type_id: type.id,
              trigger_type: 'manual',
              trigger_reason: triggerReason,
              dry_run: dryRun,
              dedupe_key: dedupeKey,
              ...placement,
            },
          }),
        );
      return { job_id: job.id, created, agent_binding_id: binding.id, dedupe_key: dedupeKey };
    });
  }
}
