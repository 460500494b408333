import { sql } from 'kysely';
import { CreateDerivedOutputUseCase, projectEventsChannel } from '@hearth/app';
import type { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { projectsRepository, type ProjectRow, type SessionRow } from '@hearth/persistence';
import { projectJournal } from '../support/factories/derived-outputs';
import { createSessionRow } from '../support/factories/events';
import { createFloorWithPage } from '../support/factories/floors';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { waitFor } from '../support/poll';
import { startTestApp, type TestApp } from '../support/test-app';

interface Req {
  projectId: string;
  key: string;
  body: Record<string, unknown>;
}
type Res = { status: number; body: Record<string, any> };

/** The use case's default (GROUP_COMMIT.pipelineMinBatch). */
const PIPELINE_MIN_BATCH = 4;

/**
 * Group commit of `POST /projects/:id/derived-outputs`: creates that arrive while a create statement
 * is in flight are written together by one statement. Each answers what it would alone, the
 * sequences of every Project stay 1..N in arrival order, every written entry has exactly one log
 * and one event (and its wake-up), refused ones none; a batch whose statement fails as a whole is
 * written item by item, so only the bad item fails.
 */
describe('Derived output create: group commit', () => {
  let t: TestApp;
  let useCase: CreateDerivedOutputUseCase;
  let owner: Caller;
  let stranger: Caller;
  let observer: Caller;
  let deriver: Caller;
  let projects: ProjectRow[];
  let archived: ProjectRow;
  let session: SessionRow;
  let floorId: string;
  let pageId: string;

  beforeAll(async () => {
    t = await startTestApp();
    useCase = t.app.get(CreateDerivedOutputUseCase);
    owner = await createAccountCaller(t, { name: 'Owner' });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
    observer = await createClientCaller(t, owner.accountId, 'Observer client');
    deriver = await createClientCaller(t, owner.accountId, 'Deriver client');
    projects = [];
    for (let i = 0; i < 5; i++) projects.push(await createProject(t, { accountId: owner.accountId }));
    archived = await createProject(t, { accountId: owner.accountId, status: 'archived' });
    await addMember(t, projects[1], observer, 'observer');
    await addMember(t, projects[2], deriver, 'deriver');
    session = await createSessionRow(t, projects[0]);
    const { floor, page } = await createFloorWithPage(t, session);
    floorId = floor.id;
    pageId = page.id;
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (r: Req): Promise<Res> =>
    t.http
      .post(`/projects/${r.projectId}/derived-outputs`)
      .set('x-api-key', r.key)
      .send(r.body)
      .then((res) => ({ status: res.status, body: res.body }));

  /**
   * Sends `requests` so that they reach the batcher together: a create on `holder` waits for its
   * Project row (locked here) while the requests queue behind it; then the lock is released. The
   * lock is held until `queued` requests wait in the batcher, or until `whileHeld` (given one) ends.
   */
  async function sendHeldUp(
    requests: Req[],
    queued: number | (() => Promise<void>) = requests.length,
  ): Promise<{ results: Res[]; holder: Res }> {
    const db = t.resources.database.db;
    const holder = await createProject(t, { accountId: owner.accountId });
    let holderResult: Promise<Res> | undefined;
    let results: Promise<Res[]> | undefined;
    await db.transaction().execute(async (tx) => {
      await projectsRepository.lockProject(tx, holder.id, 'update');
      holderResult = send({ projectId: holder.id, key: owner.apiKey, body: { domain: 'holder' } });
      await waitFor(async () => {
        const waiting = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
        return waiting.rows[0].n > 0;
      }, 'the holder to wait for its Project row');
      results = Promise.all(requests.map(send));
      if (typeof queued === 'function') await queued();
      else await waitFor(async () => useCase.batcher.queued === queued, 'the creates to queue');
    });
    return { results: await results!, holder: await holderResult! };
  }

  beforeEach(() => {
    // No second batch while the first is held up, neither a stalled one nor one sent pipelined
    // behind it: the queued creates form batches of their own.
    useCase.batcher.configure({ stallMs: 60_000, pipelineMinBatch: undefined });
  });
  afterAll(() => {
    useCase.batcher.configure({ pipelineMinBatch: PIPELINE_MIN_BATCH });
  });

  it('pipelined: once 4 creates wait behind a statement in flight, they go as a batch on the pipeline', async () => {
    useCase.batcher.configure({ pipelineMinBatch: PIPELINE_MIN_BATCH });
    const db = t.resources.database.db;
    const targets: ProjectRow[] = [];
    for (let i = 0; i < 6; i++) targets.push(await createProject(t, { accountId: owner.accountId }));
    const before = { ...useCase.batcher.stats };
    const piped = async () =>
      (
        await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM derived_outputs WHERE domain = 'piped'`.execute(db)
      ).rows[0].n;
    const { results: answers, holder } = await sendHeldUp(
      targets.map((p, i) => ({
        projectId: p.id,
        key: owner.apiKey,
        body: { domain: 'piped', value: { i } },
      })),
      async () => {
        // The first 4 went behind the held-up create and were written; 2 more wait for a
        // statement to end (two were in flight: the held one and the pipelined batch, until it ended).
        await waitFor(
          async () => useCase.batcher.queued === 2 && (await piped()) === 4,
          'a batch of 4 behind the held-up create, 2 creates queued',
        );
        expect(useCase.batcher.stats.batchedItems).toBe(before.batchedItems + 4);
        const pipeline = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name LIKE '% pipeline'`.execute(db);
        expect(pipeline.rows[0].n).toBe(1);
      },
    );
    expect(holder.status).toBe(201);
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(useCase.batcher.stats.batches).toBe(before.batches + 2);
    for (const [i, project] of targets.entries()) {
      expect(answers[i].body.item).toMatchObject({ project_id: project.id, domain: 'piped', value: { i } });
      const journal = await projectJournal(t, project);
      expect(journal.events.map((e) => Number(e.sequence))).toEqual([1]);
      expect(journal.logs.filter((l) => l.action === 'derived_output.create')).toHaveLength(1);
    }
  });

  it('50 concurrent creates over 5 Projects: each answers what it would alone, sequences 1..N', async () => {
    const wakeUps = new Map<string, number[]>();
    const unsubscribes = await Promise.all(
      projects.map((p) =>
        t.resources.eventBus.subscribe(projectEventsChannel(p.id), (message) => {
          wakeUps.set(p.id, [...(wakeUps.get(p.id) ?? []), Number(message)]);
        }),
      ),
    );
    const requests: Req[] = [];
    const refusals = new Map<number, { status: number; code: string }>();
    const refuse = (r: Req, status: number, code: string) => {
      refusals.set(requests.length, { status, code });
      requests.push(r);
    };
    for (let i = 0; i < 50; i++) {
      const p = projects[i % 5];
      const body = { domain: `d${i % 3}`, value: { i, text: `item ${i}` }, status: 'published' };
      switch (i) {
        case 3:
          refuse({ projectId: p.id, key: stranger.apiKey, body }, 404, 'project_not_found');
          break;
        case 6:
          refuse(
            { projectId: projects[1].id, key: observer.apiKey, body },
            403,
            'derived_output_write_denied',
          );
          break;
        case 9:
          refuse({ projectId: archived.id, key: owner.apiKey, body }, 409, 'project_archived');
          break;
        case 12:
          refuse(
            {
              projectId: projects[2].id,
              key: owner.apiKey,
              body: { ...body, source_session_id: session.id },
            },
            409,
            'derived_output_source_scope_mismatch',
          );
          break;
        case 15:
          refuse(
            { projectId: p.id, key: owner.apiKey, body: { ...body, source_session_id: 'ses_missing' } },
            404,
            'session_not_found',
          );
          break;
        case 18:
          refuse(
            { projectId: projects[0].id, key: owner.apiKey, body: { ...body, source_page_id: 'pg_missing' } },
            404,
            'page_not_found',
          );
          break;
        case 21:
          refuse({ projectId: 'prj_missing', key: owner.apiKey, body }, 404, 'project_not_found');
          break;
        case 24:
          // An invalid body runs the access check alone first: a non-member still gets 404.
          refuse(
            { projectId: p.id, key: stranger.apiKey, body: { ...body, status: 'nope' } },
            404,
            'project_not_found',
          );
          break;
        default:
          if (i % 5 === 0 && i % 2 === 0)
            requests.push({
              projectId: projects[0].id,
              key: owner.apiKey,
              body: {
                ...body,
                source_session_id: session.id,
                source_floor_id: floorId,
                source_page_id: pageId,
              },
            });
          else if (i % 5 === 2) requests.push({ projectId: p.id, key: deriver.apiKey, body });
          else requests.push({ projectId: p.id, key: owner.apiKey, body });
      }
    }
    const statsBefore = { ...useCase.batcher.stats };
    // All but the invalid body (answered by the access check alone) reach the batcher.
    const { results } = await sendHeldUp(requests, requests.length - 1);

    // Batched: the queued creates went in statements of several items.
    expect(useCase.batcher.stats.batches).toBeGreaterThan(statsBefore.batches);
    expect(useCase.batcher.stats.largestBatch).toBeGreaterThanOrEqual(5);
    expect(useCase.batcher.stats.fallbacks).toBe(statsBefore.fallbacks);

    const created: Record<string, any>[] = [];
    results.forEach((res, i) => {
      const refusal = refusals.get(i);
      if (refusal) {
        expect({ i, status: res.status, code: res.body.error?.code }).toEqual({ i, ...refusal });
        return;
      }
      const r = requests[i];
      expect({ i, status: res.status }).toEqual({ i, status: 201 });
      expect(res.body.item).toMatchObject({
        project_id: r.projectId,
        domain: r.body.domain,
        value: r.body.value,
        status: 'published',
        owner_account_id: owner.accountId,
        source_session_id: r.body.source_session_id ?? null,
        source_floor_id: r.body.source_floor_id ?? null,
        source_page_id: r.body.source_page_id ?? null,
      });
      created.push(res.body.item);
    });
    expect(created).toHaveLength(50 - refusals.size);

    // Alone, each refused request answers exactly the same (status and error body).
    for (const [i] of refusals) {
      const alone = await send(requests[i]);
      expect({ i, status: alone.status, body: alone.body }).toEqual({
        i,
        status: results[i].status,
        body: results[i].body,
      });
    }

    for (const project of [...projects, archived]) {
      const journal = await projectJournal(t, project);
      const mine = created.filter((c) => c.project_id === project.id);
      const expectedIds = mine.map((c) => c.id).sort();
      // Every written entry has its row, one log and one event; refused requests left nothing.
      expect(journal.rows.map((r) => r.id).sort()).toEqual(expectedIds);
      const createLogs = journal.logs.filter((l) => l.action === 'derived_output.create');
      expect(createLogs.map((l) => l.target_id).sort()).toEqual(expectedIds);
      const outputIdOf = (e: { payload: unknown }) =>
        (e.payload as { derived_output_id: string }).derived_output_id;
      expect(journal.events.map(outputIdOf).sort()).toEqual(expectedIds);
      // Sequences 1..N with no gap, in arrival order (entry ids are made in arrival order).
      expect(journal.events.map((e) => Number(e.sequence))).toEqual(mine.map((_, k) => k + 1));
      const byId = new Map(journal.logs.map((l) => [l.id, l]));
      for (const event of journal.events) {
        expect(event.payload).not.toHaveProperty('value');
        expect(byId.get(event.operation_log_id!)?.target_id).toBe(outputIdOf(event));
      }
      const ids = journal.events.map(outputIdOf);
      expect(ids).toEqual([...ids].sort());
    }

    // Each Project's readers were woken up to its last sequence.
    await waitFor(
      async () =>
        projects.every((p) => {
          const n = created.filter((c) => c.project_id === p.id).length;
          return Math.max(0, ...(wakeUps.get(p.id) ?? [])) === n;
        }),
      'the wake-ups of the last sequences',
    );
    await Promise.all(unsubscribes.map((u) => u()));
  });

  it('a batch whose statement fails as a whole is written item by item: only the bad item fails', async () => {
    const db = t.resources.database.db;
    const targets: ProjectRow[] = [];
    for (let i = 0; i < 8; i++) targets.push(await createProject(t, { accountId: owner.accountId }));
    // Fault injection: an insert of this domain fails, which fails any statement holding it.
    await sql
      .raw(
        `CREATE FUNCTION test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'injected derived output failure'; END $$;
         CREATE TRIGGER test_refuse_poison BEFORE INSERT ON derived_outputs FOR EACH ROW
         WHEN (NEW.domain = 'poison') EXECUTE FUNCTION test_refuse_poison();`,
      )
      .execute(db);
    const statsBefore = { ...useCase.batcher.stats };
    let results: Res[];
    try {
      ({ results } = await sendHeldUp(
        targets.map((p, i) => ({
          projectId: p.id,
          key: owner.apiKey,
          body: { domain: i === 3 ? 'poison' : 'fine', value: { i } },
        })),
      ));
    } finally {
      await sql
        .raw('DROP TRIGGER test_refuse_poison ON derived_outputs; DROP FUNCTION test_refuse_poison();')
        .execute(db);
    }
    expect(useCase.batcher.stats.fallbacks).toBe(statsBefore.fallbacks + 1);
    expect(useCase.batcher.stats.largestBatch).toBeGreaterThanOrEqual(8);
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 500, 201, 201, 201, 201]);
    expect(results[3].body.error?.code).toBe('internal_error');
    for (const [i, project] of targets.entries()) {
      const journal = await projectJournal(t, project);
      const n = i === 3 ? 0 : 1;
      expect(journal.rows).toHaveLength(n);
      expect(journal.events.map((e) => Number(e.sequence))).toEqual(n ? [1] : []);
      expect(journal.logs.filter((l) => l.action === 'derived_output.create')).toHaveLength(n);
    }
    // The poisoned Project's counter was not bumped: its next write is sequence 1.
    const next = await send({ projectId: targets[3].id, key: owner.apiKey, body: { domain: 'fine' } });
    expect(next.status).toBe(201);
    const after = await projectJournal(t, targets[3]);
    expect(after.events.map((e) => Number(e.sequence))).toEqual([1]);
  });

  it('a batched create stores its row, log and event column for column as a lone create does', async () => {
    const db = t.resources.database.db;
    const alone = await createProject(t, { accountId: owner.accountId });
    const batched = [
      await createProject(t, { accountId: owner.accountId }),
      await createProject(t, { accountId: owner.accountId }),
    ];
    const body = { domain: 'same', value: { text: 'same value', n: null }, status: 'draft' };
    for (const project of [alone, ...batched]) await addMember(t, project, deriver, 'deriver');
    const before = { ...useCase.batcher.stats };
    expect((await send({ projectId: alone.id, key: deriver.apiKey, body })).status).toBe(201);
    expect(useCase.batcher.stats.singles).toBe(before.singles + 1);
    const { results } = await sendHeldUp(
      batched.map((p) => ({ projectId: p.id, key: deriver.apiKey, body })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201]);
    expect(useCase.batcher.stats.batches).toBeGreaterThan(before.batches);

    // Every column but ids, Project, times and request id (after_ref holds the entry's id), with SQL
    // NULL told apart from JSON null. Each Project's one event has sequence 1.
    const stored = async (projectId: string) => {
      const result = await sql<Record<string, unknown>>`
        SELECT to_jsonb(d) - ARRAY['id', 'project_id', 'created_at', 'updated_at'] AS entry,
          to_jsonb(l) - ARRAY['id', 'project_id', 'target_id', 'after_ref', 'created_at', 'request_id']
            || jsonb_build_object('nulls', ARRAY[l.before_ref IS NULL, l.after_ref IS NULL,
              l.diff IS NULL, l.metadata IS NULL]) AS log,
          to_jsonb(e) - ARRAY['id', 'project_id', 'operation_log_id', 'payload', 'created_at']
            || jsonb_build_object('payload', e.payload - 'derived_output_id') AS event
        FROM derived_outputs d
        JOIN operation_logs l ON l.target_id = d.id
        JOIN project_events e ON e.payload->>'derived_output_id' = d.id
        WHERE d.project_id = ${projectId}`.execute(db);
      expect(result.rows).toHaveLength(1);
      return result.rows[0];
    };
    const expected = await stored(alone.id);
    // A create has no before_ref: SQL NULL, in the batch as alone.
    expect(expected.log).toMatchObject({ nulls: [true, false, false, false] });
    for (const project of batched) expect(await stored(project.id)).toEqual(expected);
  });

  it('a lone create still goes through the single statement', async () => {
    const before = { ...useCase.batcher.stats };
    const res = await send({ projectId: projects[4].id, key: owner.apiKey, body: { domain: 'alone' } });
    expect(res.status).toBe(201);
    expect(useCase.batcher.stats.singles).toBe(before.singles + 1);
    expect(useCase.batcher.stats.batches).toBe(before.batches);
  });
});

/** The batch statement on the embedded adapters (PGlite): concurrent creates, the same answers. */
describe('Derived output create: group commit, embedded mode', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('concurrent creates over 4 Projects are batched, with sequences 1..N and one event each', async () => {
    const useCase = t.app.get(CreateDerivedOutputUseCase);
    const owner = await createAccountCaller(t, { name: 'Owner' });
    const stranger = await createAccountCaller(t, { name: 'Stranger' });
    const projects: ProjectRow[] = [];
    for (let i = 0; i < 4; i++) projects.push(await createProject(t, { accountId: owner.accountId }));
    const actor = (c: Caller): Actor => ({
      kind: 'account',
      accountId: c.accountId,
      accountRole: 'user',
      clientId: c.clientId,
      clientIsDefault: true,
    });
    const before = { ...useCase.batcher.stats };
    // Called on the use case directly: over HTTP, PGlite's one connection serialises the key
    // lookups with the creates, so the creates rarely meet in the batcher.
    const results = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) =>
        useCase.execute(actor(i === 5 ? stranger : owner), projects[i % 4].id, {
          domain: 'embedded',
          value: { i },
        }),
      ),
    );
    expect(results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as DomainError).code))).toEqual(
      results.map((_, i) => (i === 5 ? 'project_not_found' : 'ok')),
    );
    expect(useCase.batcher.stats.batches).toBeGreaterThan(before.batches);
    for (const [k, project] of projects.entries()) {
      const journal = await projectJournal(t, project);
      const n = k === 1 ? 5 : 6;
      expect(journal.rows).toHaveLength(n);
      expect(journal.events.map((e) => Number(e.sequence))).toEqual(
        Array.from({ length: n }, (_, s) => s + 1),
      );
      expect(journal.logs.filter((l) => l.action === 'derived_output.create')).toHaveLength(n);
    }
  });
});
