import { Inject, Injectable } from '@nestjs/common';
import {
  agentInstructions,
  agentWriteNames,
  effectiveAgentConfig,
  parseAgentReply,
  planAgentDelivery,
  readAgentRunPayload,
  storedAgentDefaults,
  truncatedView,
  type AgentRunPhase,
  type AgentWritableTarget,
  type AgentWriteNames,
} from '@hearth/domain';
import { ProjectAccess, visibleEventLevels, type Actor } from '@hearth/permissions';
import {
  accountsRepository,
  agentRunsRepository,
  agentsRepository,
  inTransaction,
  type Db,
  type JobRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { JobFailure } from '../jobs/job-failure';
import type { LedgerJobClaim } from '../jobs/run-ledger-job.use-case';
import { bindingSettings } from './agent-binding-fields';
import { buildAgentRunContext } from './agent-run-context';
import { AgentRunDelivery, type AgentRunWrite } from './agent-run-delivery';
import { AgentRunModel } from './agent-run-model';

const fatal = (code: string, message: string) => new JobFailure(message, code, 'fatal');

/**
 * The work of one attempt of an `agent.run` job (spec 1 "Agent Job"; docs/decisions.md "Agents:
 * runs"); the processor runs it under RunLedgerJobUseCase with `claim` (one job per serial scope).
 *
 * Phase `context`: the binding must be `enabled` (else fatal `binding_disabled`) and its type `active`
 * (else fatal `agent_type_disabled`); the effective config is the type's current defaults under the
 * binding's overrides; the binding's account acts through its default Client (a disabled one is fatal);
 * the context is the trigger, the job's input and what `grants.reads` allows (buildAgentRunContext).
 * Phase `model`: one non-streamed call (AgentRunModel); the reply parsed as JSON or `{text}`.
 * Phase `deliver`: the job's `delivery_targets` still allowed now, of those this build writes
 * (`derived_output`, `project_inbox`); with dry_run nothing is written and they are listed as
 * `planned_writes`. The result is the job's `result`.
 */
@Injectable()
export class RunAgentJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly model: AgentRunModel,
    private readonly delivery: AgentRunDelivery,
  ) {}

  /**
   * The claim of an agent job: in a transaction holding its serial scope's lock, `busy` while another
   * job of the scope holds a live lease (agentsRepository.claimInSerialScope).
   */
  readonly claim: LedgerJobClaim = (input) =>
    inTransaction(this.db, ({ tx }) => agentsRepository.claimInSerialScope(tx, input));

  /**
   * The work of the attempt holding `job` (the row as the ledger claimed it: status `running`, this
   * attempt counted); its return value is the job's `result`.
   */
  async execute(job: JobRow, signal: AbortSignal = new AbortController().signal): Promise<unknown> {
    if (job.name !== 'agent.run' || !job.project_id || !job.agent_binding_id)
      throw fatal('project_agent_job_not_found', `agent job ${job.id} has no binding`);
    const phase = (name: AgentRunPhase) => this.enterPhase(job, name, signal);

    await phase('context');
    const binding = await agentsRepository.findBinding(this.db, job.project_id, job.agent_binding_id);
    if (!binding || binding.status !== 'enabled')
      throw fatal(
        'binding_disabled',
        binding ? `The Agent Binding is ${binding.status}` : 'The Agent Binding no longer exists',
      );
    const type = await agentsRepository.findType(this.db, binding.workspace_id, binding.agent_type_id);
    if (!type || type.status !== 'active') throw fatal('agent_type_disabled', 'The Agent Type is disabled');
    const effective = effectiveAgentConfig(storedAgentDefaults(type.defaults), bindingSettings(binding));
    const payload = readAgentRunPayload(job.payload);
    const dryRun = job.dry_run ?? false;

    const actor = await this.bindingActor(binding.account_id);
    const { project, role } = await this.access.require(actor, job.project_id, 'project.observe');
    if (!dryRun && project.status === 'archived')
      throw fatal('project_archived', 'The Project is archived: the run cannot write its outputs');
    const trigger = job.source_event_id
      ? ((await agentRunsRepository.findEvent(this.db, project.id, job.source_event_id)) ?? null)
      : null;
    const context = await buildAgentRunContext(this.db, {
      job,
      payload,
      trigger,
      agent: {
        type_key: type.key,
        type_name: type.name,
        binding_id: binding.id,
        scope_kind: binding.scope_kind,
      },
      reads: effective.reads,
      visibilities: visibleEventLevels(role),
    });

    await phase('model');
    const choice = await this.model.choose({
      accountId: binding.account_id,
      project,
      sessionId: payload.session_id,
      profileId: effective.llm_profile_id,
    });
    const reply = await this.model.call(
      choice,
      [
        { role: 'system', content: agentInstructions(effective.metadata) },
        { role: 'user', content: JSON.stringify(context) },
      ],
      signal,
    );
    const output = parseAgentReply(reply.text);

    await phase('deliver');
    const plan = planAgentDelivery(job.delivery_targets ?? [], effective.allowed_output_targets);
    const names = agentWriteNames(effective.metadata, type);
    let writes: AgentRunWrite[] = [];
    const skipped = [...plan.skipped];
    if (!dryRun && plan.write.length > 0) {
      const delivered = await this.delivery.deliver({
        actor,
        projectId: project.id,
        targets: plan.write,
        names,
        output,
        sourceSessionId: payload.session_id,
        sourceFloorId: payload.floor_id,
        jobId: job.id,
        origin: {
          source: 'runtime_job',
          correlation_id: job.id,
          causation_event_id: job.source_event_id,
          log_source_type: 'job',
        },
        earlier:
          job.attempt_count > 1
            ? await agentRunsRepository.writesOfJob(this.db, { projectId: project.id, jobId: job.id })
            : [],
      });
      writes = delivered.writes;
      skipped.push(...delivered.skipped);
    }
    return {
      dry_run: dryRun,
      model: { provider: choice.target.provider, model: choice.target.model },
      usage: reply.usage,
      output: truncatedView(output),
      writes,
      planned_writes: dryRun ? plan.write.map((target) => plannedWrite(target, names, payload.floor_id)) : [],
      skipped_targets: skipped,
    };
  }

  /** Records the phase (fenced by the attempt); a lost lease or a stopping worker ends the attempt here. */
  private async enterPhase(job: JobRow, phase: AgentRunPhase, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const held = await agentRunsRepository.setPhase(this.db, {
      id: job.id,
      attempt: job.attempt_count,
      phase,
      now: Date.now(),
    });
    if (!held)
      throw new JobFailure('The job is no longer held by this attempt', 'job_lease_lost', 'uncertain');
  }

  /** The binding's account acting through its default Client (spec 1: the default Client acts as its account). */
  private async bindingActor(accountId: string): Promise<Actor> {
    const account = await accountsRepository.findAccount(this.db, accountId);
    if (!account || account.status !== 'active')
      throw fatal('account_disabled', "The binding's account is disabled");
    const client = await accountsRepository.findDefaultClient(this.db, accountId);
    if (!client || client.status !== 'active')
      throw fatal('client_disabled', "The default Client of the binding's account is disabled");
    return {
      kind: 'account',
      accountId: account.id,
      accountRole: account.role,
      clientId: client.id,
      clientIsDefault: true,
    };
  }
}

/** What a dry run would write to one target (a page candidate names the floor whose reply page gets it). */
function plannedWrite(target: AgentWritableTarget, names: AgentWriteNames, floorId: string | null) {
  switch (target) {
    case 'derived_output':
      return { target, domain: names.domain, status: names.status };
    case 'project_inbox':
      return { target, kind: names.inboxKind, title: names.inboxTitle };
    case 'page_staged_write':
      return { target, floor_id: floorId, reason: names.stagedWriteReason };
  }
}
