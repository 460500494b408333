import { AgentRunDispatcher, CreateDerivedOutputUseCase } from '@hearth/app';
import { DEFAULT_AGENT_INSTRUCTIONS } from '@hearth/domain';
import {
  accountsRepository,
  inboxRepository,
  jobsRepository,
  operationLogsRepository,
  type ProjectRow,
} from '@hearth/persistence';
import { enqueueLedgerJob } from '@hearth/platform';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import {
  createAgentBinding,
  createAgentType,
  createManualRun,
  setAgentTypeStatus,
  updateAgentBinding,
  waitForJobStatus,
} from '../support/factories/agent-runs';
import { derivedOutputRows, projectEventRows } from '../support/factories/derived-outputs';
import { activateProfile, createProfile, newMasterKey } from '../support/factories/llm-profiles';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { archiveProject, createProject } from '../support/factories/projects';
import { createSessionInProject } from '../support/factories/sessions';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/**
 * Running Agent Jobs (spec 1 "Agent Job"; docs/decisions.md "Agents: runs"): the `agent.run` worker on
 * Postgres, Redis (BullMQ) and the fake model server through the real OpenAI SDK. Manual runs are
 * created as the run route creates them (test/support/factories/agent-runs.ts).
 */
describe('agent runs', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, {
      env: { ENABLE_AGENT_RUNTIME_WORKER: 'true', APP_SECRETS_MASTER_KEY: newMasterKey() },
    });
    // Retries come back after 1 s: long enough to see `retry_waiting`, short enough for the suite.
    worker = await startWorker(t.resources, {
      jobRunner: { backoff: { baseMs: 1_000, maxMs: 1_000 } },
      shutdownGraceMs: 1_000,
    });
    // Tests below write pending rows and enqueue them themselves (`enqueue: false`); the dispatcher's
    // start-up catch-up must not come late on a loaded machine and enqueue them first.
    await worker.app.get(AgentRunDispatcher).caughtUp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    project = await createProject(t, { accountId: alice.accountId });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await fake.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });
  beforeEach(() => fake.reset());

  const writer = { allowed_output_targets: ['derived_output', 'project_inbox', 'client_data'] };
  /** The requests the agents sent (turns use their own system prompt). */
  const agentRequests = (system = DEFAULT_AGENT_INSTRUCTIONS) =>
    fake.requests.filter((r) => r.messages[0]?.role === 'system' && r.messages[0].content === system);
  const userDocument = (request: { messages: Array<{ content: string }> }): Json =>
    JSON.parse(request.messages.at(-1)!.content) as Json;

  it('consumes the agent queue when ENABLE_AGENT_RUNTIME_WORKER=true', () => {
    expect(worker.queues).toEqual(['system', 'agent', 'chat']);
  });

  it('a manual run with dry_run=false writes a derived output and an inbox entry and succeeds with writes', async () => {
    const type = await createAgentType(t, alice.accountId, {
      key: 'summariser',
      defaults: { grants: writer },
    });
    const binding = await createAgentBinding(t, type, project);
    fake.script({
      reply: 'Here:\n```json\n{"summary": "all calm"}\n```',
      usage: { prompt_tokens: 30, completion_tokens: 7 },
    });
    const job = await createManualRun(t, binding, {
      dryRun: false,
      inputJson: { focus: 'mood' },
      triggerReason: 'nightly',
    });

    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      phase: 'deliver',
      attempt_count: 1,
      last_error_code: null,
      started_at: expect.any(Number),
      finished_at: expect.any(Number),
    });
    const outputs = await derivedOutputRows(t, project.id);
    expect(outputs).toHaveLength(1);
    const inbox = await inboxRepository.listAllOfProject(t.resources.database.db, project.id);
    expect(inbox).toHaveLength(1);
    expect(done.result).toEqual({
      dry_run: false,
      model: { provider: 'openai', model: 'fake-model' },
      usage: { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 },
      output: { summary: 'all calm' },
      writes: [
        { target: 'derived_output', id: outputs[0].id },
        { target: 'project_inbox', id: inbox[0].id },
      ],
      planned_writes: [],
      skipped_targets: [{ target: 'client_data', reason: 'not_supported' }],
    });
    expect(outputs[0]).toMatchObject({
      domain: 'agent.summariser',
      status: 'published',
      value: { summary: 'all calm' },
      owner_account_id: alice.accountId,
      created_by_client_id: alice.clientId,
      source_session_id: null,
    });
    expect(inbox[0]).toMatchObject({
      kind: 'agent.summariser',
      title: type.name,
      body: { summary: 'all calm' },
      status: 'pending',
      derived_output_id: outputs[0].id,
      created_by_account_id: alice.accountId,
    });

    // Each write has its log and event; the events are the job's (source runtime_job, correlated).
    const events = (await projectEventRows(t, project.id)).filter((e) => e.correlation_id === job.id);
    expect(events.map((e) => [e.type, e.source, e.actor_account_id])).toEqual([
      ['derived_output.created', 'runtime_job', alice.accountId],
      ['inbox_entry.created', 'runtime_job', alice.accountId],
    ]);
    const logs = await operationLogsRepository.list(
      t.resources.database.db,
      { accountId: alice.accountId, filters: { project_id: project.id } },
      { limit: 50, offset: 0, sortOrder: 'asc' },
    );
    expect(
      logs
        .filter((l) => l.target_id === outputs[0].id || l.target_id === inbox[0].id)
        .map((l) => [l.action, l.source_type]),
    ).toEqual([
      ['derived_output.create', 'job'],
      ['inbox_entry.create', 'job'],
    ]);

    // The prompt: the default instructions, then the context as JSON (trigger, input; no reads granted).
    const [request] = agentRequests();
    expect(request.stream).toBe(false);
    expect(request.model).toBe('fake-model');
    expect(userDocument(request)).toEqual({
      agent: { type_key: 'summariser', type_name: type.name, binding_id: binding.id, scope_kind: 'project' },
      trigger: { type: 'manual', reason: 'nightly', event: null },
      input: { focus: 'mood' },
      session_id: null,
      floor_id: null,
    });
  });

  it('dry_run=true writes nothing and lists planned_writes', async () => {
    const type = await createAgentType(t, alice.accountId, { key: 'planner', defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, project, {
      metadata: { output_domain: 'plans', output_status: 'draft', inbox_title: 'Plan review' },
    });
    const before = await derivedOutputRows(t, project.id);
    fake.script({ reply: 'not json at all' });
    const job = await createManualRun(t, binding, { dryRun: true });

    const done = await waitForJobStatus(t, job.id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toEqual({
      dry_run: true,
      model: { provider: 'openai', model: 'fake-model' },
      usage: expect.anything(),
      output: { text: 'not json at all' },
      writes: [],
      planned_writes: [
        { target: 'derived_output', domain: 'plans', status: 'draft' },
        { target: 'project_inbox', kind: 'agent.planner', title: 'Plan review' },
      ],
      skipped_targets: [{ target: 'client_data', reason: 'not_supported' }],
    });
    expect(await derivedOutputRows(t, project.id)).toHaveLength(before.length);
    const events = await projectEventRows(t, project.id);
    expect(events.filter((e) => e.correlation_id === job.id)).toEqual([]);
  });

  it('a dry run of a session-scoped binding asked with an empty body plans without a session', async () => {
    // Spec 1: the run body is optional; a writing run of this binding would need input_json.session_id.
    const type = await createAgentType(t, alice.accountId, {
      key: 'session-planner',
      scopeKind: 'session',
      defaults: { grants: { ...writer, reads: ['transcript'] } },
    });
    const binding = await createAgentBinding(t, type, project);
    fake.script({ reply: '{"plan": 1}' });
    const res = await t.http
      .post(`/projects/${project.id}/agent-bindings/${binding.id}/run`)
      .set('x-api-key', alice.apiKey);
    expect(res.status).toBe(202);
    const done = await waitForJobStatus(t, res.body.job_id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({ dry_run: true, output: { plan: 1 }, writes: [] });
    const document = userDocument(agentRequests().at(-1)!);
    expect(document).toMatchObject({
      agent: { scope_kind: 'session' },
      session_id: null,
      floor_id: null,
      transcript: [],
    });
  });

  it('a reply with an unpaired surrogate escape is written with U+FFFD instead of failing every attempt', async () => {
    const type = await createAgentType(t, alice.accountId, {
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    const binding = await createAgentBinding(t, type, project);
    // The text `\ud83d` (half an emoji): JSON.parse makes a lone surrogate of it, which jsonb refuses.
    fake.script({ reply: '{"note": "half \\ud83d"}' });
    const job = await createManualRun(t, binding, { dryRun: false });
    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempt_count: 1,
      result: { output: { note: 'half \ufffd' } },
    });
    const written = (done.result as Json).writes[0].id as string;
    const row = (await derivedOutputRows(t, project.id)).find((o) => o.id === written);
    expect(row?.value).toEqual({ note: 'half \ufffd' });
  });

  it('uses metadata.instructions as the system message and the metadata output names', async () => {
    const type = await createAgentType(t, alice.accountId, {
      defaults: {
        grants: { allowed_output_targets: ['derived_output'] },
        metadata: { instructions: 'Type says.' },
      },
    });
    const binding = await createAgentBinding(t, type, project, {
      metadata: { instructions: 'Be terse.', output_domain: 'mood', output_status: 'draft' },
    });
    fake.script({ reply: '{"mood": "tense"}' });
    const job = await createManualRun(t, binding, { dryRun: false });
    const done = await waitForJobStatus(t, job.id);
    expect(done.status).toBe('succeeded');
    expect(agentRequests('Be terse.')).toHaveLength(1);
    const written = (done.result as Json).writes[0];
    const row = (await derivedOutputRows(t, project.id)).find((o) => o.id === written.id);
    expect(row).toMatchObject({ domain: 'mood', status: 'draft', value: { mood: 'tense' } });
  });

  it('a target withdrawn from the grants since the job was created is not written', async () => {
    const type = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, project);
    const job = await createManualRun(t, binding, { dryRun: false, enqueue: false });
    await updateAgentBinding(t, binding, { grants: { allowed_output_targets: ['project_inbox'] } });
    const before = await derivedOutputRows(t, project.id);
    fake.script({ reply: '{"x": 1}' });
    await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', job.id);
    const done = await waitForJobStatus(t, job.id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({
      writes: [{ target: 'project_inbox', id: expect.stringMatching(/^inbox_/) }],
      skipped_targets: [
        { target: 'derived_output', reason: 'not_allowed' },
        { target: 'client_data', reason: 'not_allowed' },
      ],
    });
    expect(await derivedOutputRows(t, project.id)).toHaveLength(before.length);
  });

  it('a disabled binding or Agent Type dead-letters the job as fatal without calling the model', async () => {
    const type = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, project);
    const disabledJob = await createManualRun(t, binding, { enqueue: false });
    await updateAgentBinding(t, binding, { status: 'disabled' });
    await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', disabledJob.id);
    expect(await waitForJobStatus(t, disabledJob.id)).toMatchObject({
      status: 'dead_letter',
      attempt_count: 1,
      last_error_code: 'binding_disabled',
      last_error_class: 'fatal',
      result: null,
    });

    const otherType = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const otherBinding = await createAgentBinding(t, otherType, project);
    const typeJob = await createManualRun(t, otherBinding, { enqueue: false });
    await setAgentTypeStatus(t, otherType, 'disabled');
    await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', typeJob.id);
    expect(await waitForJobStatus(t, typeJob.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'agent_type_disabled',
      last_error_class: 'fatal',
    });
    expect(agentRequests()).toEqual([]);
  });

  it('a model 500 is retried: retry_waiting, then succeeded on the next attempt', async () => {
    const type = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, project);
    fake.script({ status: 500, errorBody: { error: { message: 'overloaded' } } }, { reply: '{"ok": true}' });
    const job = await createManualRun(t, binding, { dryRun: true });

    const waiting = await waitForJobStatus(t, job.id, ['retry_waiting', 'succeeded', 'dead_letter']);
    expect(waiting).toMatchObject({
      status: 'retry_waiting',
      attempt_count: 1,
      phase: 'model',
      last_error_code: 'generation_upstream_failed',
      last_error_class: 'retryable',
    });
    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({ status: 'succeeded', attempt_count: 2, result: { output: { ok: true } } });
    expect(agentRequests()).toHaveLength(2);
  });

  it('a model 401 is fatal: dead_letter at the first attempt', async () => {
    const type = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, project);
    fake.script({ status: 401, errorBody: { error: { message: 'bad key' } } });
    const job = await createManualRun(t, binding);
    expect(await waitForJobStatus(t, job.id)).toMatchObject({
      status: 'dead_letter',
      attempt_count: 1,
      last_error_code: 'generation_upstream_failed',
      last_error_class: 'fatal',
    });
  });

  it("uses the binding's llm_profile_id when set; a missing profile is fatal profile_not_found", async () => {
    const profile = await createProfile(t, alice.apiKey, {
      model_id: 'profile-model',
      base_url: fake.openaiBaseUrl,
      provider: 'openai-compatible',
    });
    const type = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, project, { llmProfileId: profile.id });
    fake.script({ reply: '{"from": "profile"}' });
    const job = await createManualRun(t, binding);
    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { model: { provider: 'openai-compatible', model: 'profile-model' } },
    });
    expect(agentRequests().map((r) => r.model)).toEqual(['profile-model']);

    const missing = await createAgentBinding(t, type, project, { llmProfileId: 'llmp_missing' });
    const failed = await createManualRun(t, missing);
    expect(await waitForJobStatus(t, failed.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'profile_not_found',
      last_error_class: 'fatal',
    });
    // Another account's profile is not found either.
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const bobProfile = await createProfile(t, bob.apiKey, {
      base_url: fake.openaiBaseUrl,
      provider: 'openai-compatible',
    });
    const borrowed = await createAgentBinding(t, type, project, { llmProfileId: bobProfile.id });
    const borrowedJob = await createManualRun(t, borrowed);
    expect(await waitForJobStatus(t, borrowedJob.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'profile_not_found',
    });
  });

  it('a disabled profile, named or bound to the slot, is fatal', async () => {
    const carol = await createAccountCaller(t, { name: 'Carol' });
    const carolProject = await createProject(t, { accountId: carol.accountId });
    const profile = await createProfile(t, carol.apiKey, {
      base_url: fake.openaiBaseUrl,
      provider: 'openai-compatible',
    });
    const disable = await t.http
      .patch(`/llm-profiles/${profile.id}`)
      .set('x-api-key', carol.apiKey)
      .send({ status: 'disabled' });
    expect(disable.status).toBe(200);
    const type = await createAgentType(t, carol.accountId, { defaults: { grants: writer } });

    const named = await createAgentBinding(t, type, carolProject, { llmProfileId: profile.id });
    const namedJob = await createManualRun(t, named);
    expect(await waitForJobStatus(t, namedJob.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'profile_disabled',
      last_error_class: 'fatal',
    });

    // Bound globally (slot `*`), then disabled: the runtime resolution refuses it as turns do.
    const global = await createProfile(t, carol.apiKey, {
      base_url: fake.openaiBaseUrl,
      provider: 'openai-compatible',
    });
    await activateProfile(t, carol.apiKey, global.id, {});
    const off = await t.http
      .patch(`/llm-profiles/${global.id}`)
      .set('x-api-key', carol.apiKey)
      .send({ status: 'disabled' });
    expect(off.status).toBe(200);
    const inherits = await createAgentBinding(t, type, carolProject);
    const boundJob = await createManualRun(t, inherits);
    expect(await waitForJobStatus(t, boundJob.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'instance_slot_disabled_required',
      last_error_class: 'fatal',
    });
    expect(agentRequests()).toEqual([]);
  });

  it('a disabled binding account is fatal account_disabled', async () => {
    const dave = await createAccountCaller(t, { name: 'Dave' });
    const daveProject = await createProject(t, { accountId: dave.accountId });
    const type = await createAgentType(t, dave.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, daveProject);
    const job = await createManualRun(t, binding, { enqueue: false });
    // As PATCH /accounts/:id does in multi mode (this suite runs in single mode).
    await accountsRepository.updateAccount(t.resources.database.db, dave.accountId, {
      status: 'disabled',
      updated_at: Date.now(),
    });
    await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', job.id);
    expect(await waitForJobStatus(t, job.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'account_disabled',
      last_error_class: 'fatal',
    });
  });

  it('the prompt holds only what grants.reads allows', async () => {
    const session = await createSessionInProject(t, project.id, { apiKey: alice.apiKey });
    const respond = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', alice.apiKey)
      .send({ message: 'the cellar door is blue' });
    expect(respond.status).toBe(200);
    const marker = await t.http
      .post(`/projects/${project.id}/derived-outputs`)
      .set('x-api-key', alice.apiKey)
      .send({ domain: 'marker', value: { note: 'marker-value' } });
    expect(marker.status).toBe(201);
    // Another account's session (in another Project) is never read, even when a job names it.
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const bobProject = await createProject(t, { accountId: bob.accountId });
    const bobSession = await createSessionInProject(t, bobProject.id, { apiKey: bob.apiKey });
    const bobRespond = await t.http
      .post(`/sessions/${bobSession.id}/respond`)
      .set('x-api-key', bob.apiKey)
      .send({ message: 'bob private words' });
    expect(bobRespond.status).toBe(200);

    const type = await createAgentType(t, alice.accountId, {
      defaults: { grants: { reads: ['project_events', 'transcript', 'derived_outputs'] } },
    });
    const run = async (reads: string[], sessionId: string) => {
      fake.reset();
      const binding = await createAgentBinding(t, type, project, { grants: { reads } });
      const job = await createManualRun(t, binding, { sessionId });
      expect((await waitForJobStatus(t, job.id)).status).toBe('succeeded');
      const [request] = agentRequests();
      return { text: request.messages.at(-1)!.content, doc: userDocument(request) };
    };

    const none = await run([], session.id);
    expect(Object.keys(none.doc).sort()).toEqual(['agent', 'floor_id', 'input', 'session_id', 'trigger']);
    expect(none.text).not.toContain('cellar door');
    expect(none.text).not.toContain('marker-value');

    const transcript = await run(['transcript'], session.id);
    expect(transcript.doc.transcript).toEqual([
      { floor_no: 0, role: 'user', content: 'the cellar door is blue' },
      { floor_no: 0, role: 'assistant', content: 'ECHO: the cellar door is blue' },
    ]);
    expect(transcript.doc).not.toHaveProperty('project_events');
    expect(transcript.doc).not.toHaveProperty('derived_outputs');
    expect(transcript.text).not.toContain('marker-value');

    const all = await run(['project_events', 'transcript', 'derived_outputs'], session.id);
    expect(all.doc.derived_outputs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ domain: 'marker', value: { note: 'marker-value' } }),
      ]),
    );
    expect(all.doc.project_events.map((e: Json) => e.type)).toEqual(
      expect.arrayContaining(['floor.committed', 'derived_output.created']),
    );
    expect(all.doc.project_events.every((e: Json) => e.visibility !== 'internal')).toBe(true);

    const foreign = await run(['transcript'], bobSession.id);
    expect(foreign.doc.transcript).toEqual([]);
    expect(foreign.text).not.toContain('bob private words');
  });

  it('a retried attempt does not write again what an earlier attempt of the job wrote', async () => {
    const type = await createAgentType(t, alice.accountId, {
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    const binding = await createAgentBinding(t, type, project);
    const job = await createManualRun(t, binding, { dryRun: false, enqueue: false });
    // Attempt 1 wrote its derived output, then its worker died before recording success.
    const db = t.resources.database.db;
    const claimed = await jobsRepository.claim(db, {
      id: job.id,
      name: 'agent.run',
      now: Date.now(),
      leaseMs: 60_000,
    });
    expect(claimed?.attempt_count).toBe(1);
    const earlier = await t.app.get(CreateDerivedOutputUseCase, { strict: false }).execute(
      {
        kind: 'account',
        accountId: alice.accountId,
        accountRole: 'user',
        clientId: alice.clientId,
        clientIsDefault: true,
      },
      project.id,
      { domain: `agent.${type.key}`, status: 'published', value: { first: true } },
      { source: 'runtime_job', correlation_id: job.id, causation_event_id: null, log_source_type: 'job' },
    );
    await jobsRepository.markRetryWaiting(db, {
      id: job.id,
      attempt: 1,
      availableAt: Date.now(),
      error: {
        last_error: 'worker lost',
        last_error_code: 'job_lease_expired',
        last_error_class: 'uncertain',
      },
      now: Date.now(),
    });
    const before = await derivedOutputRows(t, project.id);
    fake.script({ reply: '{"second": true}' });
    await enqueueLedgerJob(t.resources.jobQueue, 'agent.run', job.id);
    const done = await waitForJobStatus(t, job.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempt_count: 2,
      result: { writes: [{ target: 'derived_output', id: earlier.id }], output: { second: true } },
    });
    expect(await derivedOutputRows(t, project.id)).toHaveLength(before.length);
  });

  it('an archived Project dead-letters a writing run (project_archived) but lets a dry run read', async () => {
    const archived = await createProject(t, { accountId: alice.accountId });
    const type = await createAgentType(t, alice.accountId, { defaults: { grants: writer } });
    const binding = await createAgentBinding(t, type, archived);
    await archiveProject(t, archived.id);
    const writing = await createManualRun(t, binding, { dryRun: false });
    expect(await waitForJobStatus(t, writing.id)).toMatchObject({
      status: 'dead_letter',
      last_error_code: 'project_archived',
      last_error_class: 'fatal',
    });
    fake.script({ reply: '{}' });
    const dry = await createManualRun(t, binding, { dryRun: true });
    expect((await waitForJobStatus(t, dry.id)).status).toBe('succeeded');
  });

  it('truncates an output over 16 KiB in the result but writes it whole', async () => {
    const type = await createAgentType(t, alice.accountId, {
      defaults: { grants: { allowed_output_targets: ['derived_output'] } },
    });
    const binding = await createAgentBinding(t, type, project);
    const big = { text: 'x'.repeat(20_000) };
    fake.script({ reply: JSON.stringify(big) });
    const job = await createManualRun(t, binding, { dryRun: false });
    const done = await waitForJobStatus(t, job.id);
    expect(done.status).toBe('succeeded');
    const result = done.result as Json;
    expect(result.output).toMatchObject({ truncated: true, byte_count: JSON.stringify(big).length });
    expect(result.output.preview).toHaveLength(16 * 1024);
    const row = (await derivedOutputRows(t, project.id)).find((o) => o.id === result.writes[0].id);
    expect(row?.value).toEqual(big);
  });
});

describe('agent runs without a model', () => {
  let t: TestApp;
  let worker: WorkerHandle;

  beforeAll(async () => {
    t = await startTestApp({ env: { ENABLE_AGENT_RUNTIME_WORKER: 'true' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('no configured model is fatal model_not_configured', async () => {
    const alice = await createAccountCaller(t, { name: 'Alice' });
    const project = await createProject(t, { accountId: alice.accountId });
    const type = await createAgentType(t, alice.accountId);
    const binding = await createAgentBinding(t, type, project);
    const job = await createManualRun(t, binding);
    expect(await waitForJobStatus(t, job.id)).toMatchObject({
      status: 'dead_letter',
      attempt_count: 1,
      phase: 'model',
      last_error_code: 'model_not_configured',
      last_error_class: 'fatal',
    });
  });
});
