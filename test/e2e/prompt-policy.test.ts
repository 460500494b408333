import { DEFAULT_PROMPT_POLICY } from '@hearth/domain/prompt/policy';
import { operationLogsRepository, promptRuntimeRepository, type SessionRow } from '@hearth/persistence';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { archiveProject, findProject } from '../support/factories/projects';
import { emptyBranch, materialisedBranch, materialisedMain } from '../support/factories/prompt-runtime';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

const DEBUG_OFF = {
  include_prompt_snapshot: false,
  include_runtime_trace: false,
  include_worldbook_matches: false,
};

describe('prompt runtime policy routes', () => {
  let t: TestApp;
  let other: Caller;
  let observer: Caller;

  const db = () => t.resources.database.db;
  const newSession = async (): Promise<SessionRow> => (await findSessionRow(t, (await createSession(t)).id))!;
  const policyUrl = (s: { id: string }, branchId?: string) =>
    branchId
      ? `/sessions/${s.id}/prompt-runtime/branches/${branchId}/policy`
      : `/sessions/${s.id}/prompt-runtime/policy`;
  const get = (url: string, key = ADMIN_KEY) => t.http.get(url).set('x-api-key', key);
  const patch = (url: string, body: unknown, key = ADMIN_KEY) =>
    t.http
      .patch(url)
      .set('x-api-key', key)
      .send(body as object);
  const policyLogs = async (sessionId: string) =>
    (
      await operationLogsRepository.list(
        db(),
        { accountId: 'default', filters: { session_id: sessionId } },
        { limit: 500, offset: 0, sortOrder: 'asc' },
      )
    ).filter((l) => l.action === 'update_prompt_policy');
  const storedPolicies = (sessionId: string) =>
    db().selectFrom('prompt_policies').selectAll().where('session_id', '=', sessionId).execute();

  beforeAll(async () => {
    t = await startTestApp();
    other = await createAccountCaller(t, { name: 'Other' });
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('session level', () => {
    it('GET of a never-written policy: empty persistent policy, null envelope, the system default resolved', async () => {
      const s = await newSession();
      const res = await get(policyUrl(s)).expect(200);
      expect(res.body.data).toEqual({
        persistent_policy: {},
        persistent_policy_envelope: null,
        resolved_policy: { ...DEFAULT_PROMPT_POLICY, debug: DEBUG_OFF },
        resolved_sources: expect.objectContaining({ 'structure.mode': 'system_default' }),
        warnings: [],
      });
      expect(new Set(Object.values(res.body.data.resolved_sources))).toEqual(new Set(['system_default']));
    });

    it('PATCH deep-merges, keeps absent sections, null clears, bumps the version and logs the versions only', async () => {
      const s = await newSession();
      const first = await patch(policyUrl(s), {
        structure: { mode: 'strict_alternating', merge_adjacent_same_role: true },
        budget: { max_input_tokens: 8000 },
      }).expect(200);
      expect(first.body.data.persistent_policy).toEqual({
        structure: { mode: 'strict_alternating', merge_adjacent_same_role: true },
        budget: { max_input_tokens: 8000 },
      });
      expect(first.body.data.persistent_policy_envelope).toEqual({
        version: 1,
        updated_at: expect.any(Number),
        updated_by: 'default',
        value: first.body.data.persistent_policy,
      });
      expect(first.body.data.resolved_policy.structure).toEqual({
        ...DEFAULT_PROMPT_POLICY.structure,
        mode: 'strict_alternating',
        merge_adjacent_same_role: true,
      });
      expect(first.body.data.resolved_policy.debug).toEqual(DEBUG_OFF);
      expect(first.body.data.resolved_sources['structure.mode']).toBe('session_policy');

      const second = await patch(policyUrl(s), {
        structure: { mode: 'flattened' },
        budget: null,
        visibility: { hidden_floor_ranges: [{ start_floor_no: 1, end_floor_no: 3 }] },
      }).expect(200);
      expect(second.body.data.persistent_policy).toEqual({
        structure: { mode: 'flattened', merge_adjacent_same_role: true },
        visibility: { hidden_floor_ranges: [{ start_floor_no: 1, end_floor_no: 3 }] },
      });
      expect(second.body.data.persistent_policy_envelope.version).toBe(2);
      expect(second.body.data.resolved_policy.budget).toEqual(DEFAULT_PROMPT_POLICY.budget);
      expect(second.body.data.resolved_sources['budget.max_input_tokens']).toBe('system_default');

      // A leaf null clears the leaf; the emptied section disappears from the stored value.
      const third = await patch(policyUrl(s), {
        structure: { mode: null, merge_adjacent_same_role: null },
      }).expect(200);
      expect(third.body.data.persistent_policy).toEqual({
        visibility: { hidden_floor_ranges: [{ start_floor_no: 1, end_floor_no: 3 }] },
      });
      expect(third.body.data.persistent_policy_envelope.version).toBe(3);

      const read = await get(policyUrl(s)).expect(200);
      expect(read.body.data).toEqual(third.body.data);

      const logs = await policyLogs(s.id);
      expect(logs).toHaveLength(3);
      expect(logs.map((l) => [l.before_ref, l.after_ref])).toEqual([
        [{ version: 0 }, { version: 1 }],
        [{ version: 1 }, { version: 2 }],
        [{ version: 2 }, { version: 3 }],
      ]);
      expect(logs[0]).toMatchObject({
        session_id: s.id,
        project_id: s.project_id,
        branch_id: null,
        target_type: 'session_prompt_policy',
        target_id: s.id,
        metadata: { scope: 'session', sections: ['structure', 'budget'] },
      });
    });

    it('a PATCH that leaves the stored value as it was writes nothing', async () => {
      const s = await newSession();
      await patch(policyUrl(s), { delivery: { no_assistant: true } }).expect(200);
      const again = await patch(policyUrl(s), { delivery: { no_assistant: true } }).expect(200);
      expect(again.body.data.persistent_policy_envelope.version).toBe(1);
      // Clearing what was never written on a never-written level writes nothing either.
      const fresh = await newSession();
      const cleared = await patch(policyUrl(fresh), { structure: null }).expect(200);
      expect(cleared.body.data.persistent_policy_envelope).toBeNull();
      expect(await storedPolicies(fresh.id)).toEqual([]);
      expect(await policyLogs(s.id)).toHaveLength(1);
      expect(await policyLogs(fresh.id)).toHaveLength(0);
    });

    it.each([
      ['no section', {}, ['structure', 'delivery', 'budget', 'source_selection', 'visibility']],
      [
        'only expected_version',
        { expected_version: 0 },
        ['structure', 'delivery', 'budget', 'source_selection', 'visibility'],
      ],
      ['an unknown section', { memory: { enabled: true } }, ['memory']],
      ['the read-only debug section', { debug: { include_runtime_trace: true } }, ['debug']],
      ['an unknown field', { structure: { colour: 'red' } }, ['structure.colour']],
      ['a bad enum value', { structure: { mode: 'loud' } }, ['structure.mode']],
      ['a non-positive token budget', { budget: { max_input_tokens: 0 } }, ['budget.max_input_tokens']],
      ['a section that is not an object', { delivery: true }, ['delivery']],
      [
        'a reversed floor range',
        { visibility: { hidden_floor_ranges: [{ start_floor_no: 5, end_floor_no: 4 }] } },
        ['visibility.hidden_floor_ranges'],
      ],
      [
        'a fractional max_messages',
        { source_selection: { history: { max_messages: 2.5 } } },
        ['source_selection.history.max_messages'],
      ],
      [
        'a negative expected_version',
        { structure: { mode: 'default' }, expected_version: -1 },
        ['expected_version'],
      ],
    ])('400 validation_error for %s, naming the path, and nothing written', async (_name, body, fields) => {
      const s = await newSession();
      const res = await patch(policyUrl(s), body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(fields);
      expect(await storedPolicies(s.id)).toEqual([]);
    });

    it('expected_version: the current version writes, a stale one is 409 policy_conflict and writes nothing', async () => {
      const s = await newSession();
      await patch(policyUrl(s), { structure: { mode: 'flattened' }, expected_version: 0 }).expect(200);
      const stale = await patch(policyUrl(s), { structure: { mode: 'default' }, expected_version: 0 }).expect(
        409,
      );
      expect(stale.body.error).toMatchObject({
        code: 'policy_conflict',
        details: { expected_version: 0, current_version: 1 },
      });
      const ahead = await patch(policyUrl(s), { structure: { mode: 'default' }, expected_version: 5 }).expect(
        409,
      );
      expect(ahead.body.error.code).toBe('policy_conflict');
      const ok = await patch(policyUrl(s), {
        structure: { mode: 'no_assistant' },
        expected_version: 1,
      }).expect(200);
      expect(ok.body.data.persistent_policy_envelope.version).toBe(2);
      expect(ok.body.data.persistent_policy).toEqual({ structure: { mode: 'no_assistant' } });
      expect(await policyLogs(s.id)).toHaveLength(2);
    });

    it('20 parallel PATCHes with the same expected_version: one 200 and 19 policy_conflict', async () => {
      const s = await newSession();
      await patch(policyUrl(s), { budget: { max_input_tokens: 100 } }).expect(200);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          patch(policyUrl(s), { budget: { max_input_tokens: 1000 + i }, expected_version: 1 }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((x) => x === 200)).toHaveLength(1);
      expect(statuses.filter((x) => x === 409)).toHaveLength(19);
      expect(
        results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'policy_conflict'),
      ).toBe(true);
      const winner = results.find((r) => r.status === 200)!;
      const rows = await storedPolicies(s.id);
      expect(rows).toHaveLength(1);
      expect(rows[0].version).toBe(2);
      expect(rows[0].value).toEqual(winner.body.data.persistent_policy);
    });

    it('20 parallel PATCHes without expected_version are applied one after another, each bumping the version', async () => {
      const s = await newSession();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          patch(policyUrl(s), { budget: { reserved_completion_tokens: i } }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      const versions = results
        .map((r) => r.body.data.persistent_policy_envelope.version)
        .sort((a, b) => a - b);
      expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const rows = await storedPolicies(s.id);
      expect(rows[0].version).toBe(20);
      const last = results.find((r) => r.body.data.persistent_policy_envelope.version === 20)!;
      expect(rows[0].value).toEqual(last.body.data.persistent_policy);
      expect(await policyLogs(s.id)).toHaveLength(20);
    });
  });

  describe('branch level', () => {
    it('a branch overlay resolves over the session policy and leaves the session level alone', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      await patch(policyUrl(s), {
        structure: { mode: 'flattened' },
        budget: { max_input_tokens: 5000 },
      }).expect(200);

      const before = await get(policyUrl(s, main.id)).expect(200);
      expect(before.body.data.persistent_policy).toEqual({});
      expect(before.body.data.persistent_policy_envelope).toBeNull();
      expect(before.body.data.resolved_policy.structure.mode).toBe('flattened');
      expect(before.body.data.resolved_sources['structure.mode']).toBe('session_policy');

      const res = await patch(policyUrl(s, main.id), { budget: { max_input_tokens: 900 } }).expect(200);
      expect(res.body.data.persistent_policy).toEqual({ budget: { max_input_tokens: 900 } });
      expect(res.body.data.persistent_policy_envelope).toMatchObject({ version: 1, updated_by: 'default' });
      expect(res.body.data.resolved_policy.budget.max_input_tokens).toBe(900);
      expect(res.body.data.resolved_sources['budget.max_input_tokens']).toBe('branch_policy');
      expect(res.body.data.resolved_policy.structure.mode).toBe('flattened');
      expect(res.body.data.resolved_policy.debug).toEqual(DEBUG_OFF);

      const session = await get(policyUrl(s)).expect(200);
      expect(session.body.data.persistent_policy).toEqual({
        structure: { mode: 'flattened' },
        budget: { max_input_tokens: 5000 },
      });
      expect(session.body.data.persistent_policy_envelope.version).toBe(1);

      // Clearing the overlay's section lets the session level show through again.
      const cleared = await patch(policyUrl(s, main.id), { budget: null, expected_version: 1 }).expect(200);
      expect(cleared.body.data.persistent_policy).toEqual({});
      expect(cleared.body.data.persistent_policy_envelope.version).toBe(2);
      expect(cleared.body.data.resolved_policy.budget.max_input_tokens).toBe(5000);

      const logs = await policyLogs(s.id);
      expect(logs.filter((l) => l.branch_id === main.id)).toHaveLength(2);
      expect(logs.find((l) => l.branch_id === main.id)).toMatchObject({
        target_type: 'branch_prompt_policy',
        target_id: main.id,
        metadata: { scope: 'branch', sections: ['budget'] },
      });

      // Each branch has its own overlay and its own versions.
      const other = await materialisedBranch(t, s);
      const second = await patch(policyUrl(s, other), { delivery: { require_last_user: true } }).expect(200);
      expect(second.body.data.persistent_policy_envelope.version).toBe(1);
      expect(second.body.data.resolved_policy.budget.max_input_tokens).toBe(5000);
      expect(second.body.data.resolved_policy.delivery.require_last_user).toBe(true);
      const stale = await patch(policyUrl(s, other), { delivery: null, expected_version: 2 }).expect(409);
      expect(stale.body.error.code).toBe('policy_conflict');
    });

    it('404 branch_not_found for an unknown branch, a branch of another session and a branch without floors', async () => {
      const s = await newSession();
      const otherSession = await newSession();
      const foreign = await materialisedBranch(t, otherSession);
      const empty = await emptyBranch(t, s);
      for (const branchId of ['br_missing', foreign, empty]) {
        const read = await get(policyUrl(s, branchId)).expect(404);
        expect(read.body.error.code).toBe('branch_not_found');
        const write = await patch(policyUrl(s, branchId), { structure: { mode: 'flattened' } }).expect(404);
        expect(write.body.error.code).toBe('branch_not_found');
      }
      expect(await storedPolicies(s.id)).toEqual([]);
      expect(await storedPolicies(otherSession.id)).toEqual([]);
    });

    it('validation runs before the branch lookup: a bad body on a branch route is 400', async () => {
      const s = await newSession();
      const res = await patch(policyUrl(s, 'br_missing'), { structure: { mode: 1 } }).expect(400);
      expect(res.body.error.code).toBe('validation_error');
    });
  });

  describe('access', () => {
    it('404 session_not_found for a missing session and for another account, on both levels', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      for (const url of [policyUrl({ id: 'ses_missing' }), policyUrl({ id: 'ses_missing' }, main.id)]) {
        expect((await get(url).expect(404)).body.error.code).toBe('session_not_found');
        expect((await patch(url, { structure: { mode: 'flattened' } }).expect(404)).body.error.code).toBe(
          'session_not_found',
        );
      }
      for (const url of [policyUrl(s), policyUrl(s, main.id)]) {
        const read = await get(url, other.apiKey).expect(404);
        expect(read.body.error.code).toBe('session_not_found');
        expect(JSON.stringify(read.body)).not.toContain(main.id);
        const write = await patch(url, { structure: { mode: 'flattened' } }, other.apiKey).expect(404);
        expect(write.body.error.code).toBe('session_not_found');
      }
      // A non-default Client of the owner account is no member: 404 too.
      const client = await createClientCaller(t, 'default');
      expect((await get(policyUrl(s), client.apiKey).expect(404)).body.error.code).toBe('session_not_found');
      expect(await storedPolicies(s.id)).toEqual([]);
    });

    it('an observer reads both levels and gets 403 project_access_denied on writes', async () => {
      const s = await newSession();
      const main = await materialisedMain(t, s);
      await addMember(t, (await findProject(t, s.project_id))!, observer, 'observer');
      await patch(policyUrl(s), { structure: { mode: 'flattened' } }).expect(200);
      const read = await get(policyUrl(s), observer.apiKey).expect(200);
      expect(read.body.data.persistent_policy).toEqual({ structure: { mode: 'flattened' } });
      await get(policyUrl(s, main.id), observer.apiKey).expect(200);
      for (const url of [policyUrl(s), policyUrl(s, main.id)]) {
        const res = await patch(url, { structure: { mode: 'default' } }, observer.apiKey).expect(403);
        expect(res.body.error.code).toBe('project_access_denied');
      }
      expect((await storedPolicies(s.id)).map((r) => r.version)).toEqual([1]);
    });

    it('an archived session or Project can be read but not written (409)', async () => {
      const s = await newSession();
      await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' })
        .expect(200);
      await get(policyUrl(s)).expect(200);
      const archived = await patch(policyUrl(s), { structure: { mode: 'flattened' } }).expect(409);
      expect(archived.body.error.code).toBe('session_archived');

      const p = await newSession();
      await archiveProject(t, p.project_id);
      await get(policyUrl(p)).expect(200);
      const frozen = await patch(policyUrl(p), { structure: { mode: 'flattened' } }).expect(409);
      expect(frozen.body.error.code).toBe('project_archived');
      expect(await storedPolicies(s.id)).toEqual([]);
      expect(await storedPolicies(p.id)).toEqual([]);
    });
  });

  it('documents the routes in /openapi.json', async () => {
    const doc = await t.http.get('/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/sessions/{id}/prompt-runtime/policy',
        '/sessions/{id}/prompt-runtime/branches/{branchId}/policy',
        '/sessions/{id}/prompt-runtime/injections/{injectionId}',
        '/sessions/{id}/prompt-runtime/branches/{branchId}/injections',
      ]),
    );
  });

  it('policies go with their session, and loadForTurn reads both levels', async () => {
    const s = await newSession();
    const main = await materialisedMain(t, s);
    await patch(policyUrl(s), { structure: { mode: 'flattened' } }).expect(200);
    await patch(policyUrl(s, main.id), { budget: { max_input_tokens: 700 } }).expect(200);
    const other = await materialisedBranch(t, s);
    await patch(policyUrl(s, other), { budget: { max_input_tokens: 1 } }).expect(200);

    const forMain = await promptRuntimeRepository.loadForTurn(db(), s.id, main.id);
    expect(forMain.sessionPolicy).toEqual({ structure: { mode: 'flattened' } });
    expect(forMain.branchPolicy).toEqual({ budget: { max_input_tokens: 700 } });
    const fresh = await materialisedBranch(t, s);
    expect((await promptRuntimeRepository.loadForTurn(db(), s.id, fresh)).branchPolicy).toBeNull();

    await t.http.delete(`/sessions/${s.id}`).set('x-api-key', ADMIN_KEY).expect(200);
    expect(await storedPolicies(s.id)).toEqual([]);
  });
});
