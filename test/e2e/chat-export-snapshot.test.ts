import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { textBody, waitForChatTransferJob } from '../support/factories/chat-transfer';
import { appendTurns } from '../support/factories/conversation';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/** Turns the session has before the exports start; every export must hold at least these. */
const INITIAL_TURNS = 20;
/** Sync exports per format taken while turns commit. */
const EXPORTS_PER_FORMAT = 50;
/** Sync exports per format taken at once. */
const PARALLEL_EXPORTS = 2;
/** Export jobs per format requested while turns commit (the worker runs them as they come). */
const JOBS_PER_FORMAT = 30;
/** Branches of the session taking turns at once, one writer each (`main` and side branches). */
const WRITERS = 4;
/** A backstop: the writers stop at this many turns in all, whatever happens. */
const MAX_TURNS = 5000;

const userText = (i: number) => `user: turn ${i}`;
const replyText = (i: number) => `reply: turn ${i}`;

/**
 * What is wrong with an `nchat` export of a session whose every turn was committed in one transaction
 * (`appendTurns`: one floor with an input page holding the user's message and an output page holding
 * the reply): in a consistent moment every floor has both pages and their message, every branch's head
 * is among the floors (its own last floor once it has one), and `main` has at least the initial turns.
 * Empty when it is whole.
 */
function nchatProblems(file: Json): string[] {
  const problems: string[] = [];
  const floors = file.data.floors as Json[];
  for (const branch of file.data.branches as Json[]) {
    const own = floors.filter((f) => f.branch_id_ref === branch._original_id);
    const last = own.reduce<Json | undefined>((a, f) => (a && a.floor_no > f.floor_no ? a : f), undefined);
    if (!floors.some((f) => f._original_id === branch.head_floor_id_ref))
      problems.push(`${branch.name} head not among ${floors.length} floors`);
    else if (last && last._original_id !== branch.head_floor_id_ref)
      problems.push(`${branch.name} head is not its last floor`);
    if (branch.name === 'main' && own.length < INITIAL_TURNS) problems.push(`main has ${own.length} floors`);
  }
  for (const f of floors) {
    const pages = f.pages as Json[];
    if (pages.length !== 2) problems.push(`a floor has ${pages.length} pages`);
    for (const p of pages) {
      if (p.messages.length !== 1) problems.push(`a page has ${p.messages.length} messages`);
    }
  }
  return problems;
}

/**
 * What is wrong with an `ext_jsonl` export of such a session: after the header, the user line and the
 * reply of turns 0..n-1 in order, n at least the initial turns. Empty when it is whole.
 */
function extJsonlProblems(text: string): string[] {
  const lines = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Json);
  const messages = lines.slice(1);
  if (messages.length % 2 !== 0 || messages.length < 2 * INITIAL_TURNS)
    return [`${messages.length} message lines after the header`];
  for (let i = 0; i < messages.length / 2; i++) {
    if (messages[2 * i].mes !== userText(i) || messages[2 * i + 1].mes !== replyText(i))
      return [`turn ${i}: ${JSON.stringify([messages[2 * i].mes, messages[2 * i + 1].mes])}`];
  }
  return [];
}

/**
 * An export reads the session's branches, lines, floors, pages and messages (and its other rows) in one
 * REPEATABLE READ transaction, so turns committing meanwhile cannot tear it: before, each read saw its own
 * moment, and an export could name a head it did not carry, hold a floor without its pages or a page
 * without its messages (`ext_jsonl` then had only its header, `nchat` no longer imported).
 */
describe('Chat export reads one snapshot while turns commit', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;

  beforeAll(async () => {
    // The session outgrows the default sync limit (2000 messages) while the writers run.
    t = await startTestApp({ env: { CHAT_EXPORT_SYNC_MAX_MESSAGES: String(4 * MAX_TURNS) } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  /**
   * A session with the initial turns on `main` and side branches forked from its last one, and a loop
   * per branch committing one turn per transaction until stopped (one writer per branch: a branch takes
   * one turn at a time).
   */
  async function busySession(title: string) {
    const created = await createSession(t, { apiKey: alice.apiKey, body: { greeting: false, title } });
    const session = (await findSessionRow(t, created.id))!;
    const initial = await appendTurns(t, session, INITIAL_TURNS, { text: (i) => `turn ${i}` });
    const branchIds = [initial[0].branch_id];
    for (let i = 1; i < WRITERS; i++) {
      const res = await t.http
        .post(`/floors/${initial[INITIAL_TURNS - 1].id}/branch`)
        .set('x-api-key', alice.apiKey)
        .send({ name: `side ${i}` });
      expect(res.status).toBe(201);
      branchIds.push(res.body.data.branch_id as string);
    }
    let turns = INITIAL_TURNS;
    let stopped = false;
    const writers = branchIds.map(async (branchId, w) => {
      for (let n = INITIAL_TURNS; !stopped && turns < MAX_TURNS; n++) {
        await appendTurns(t, session, 1, {
          branchId,
          text: () => (w === 0 ? `turn ${n}` : `side ${w}.${n}`),
        });
        turns += 1;
      }
    });
    return {
      session,
      async stop() {
        stopped = true;
        await Promise.all(writers);
        return turns;
      },
    };
  }

  const exportChat = (sessionId: string, format: string) =>
    t.http
      .get(`/export/chat/${sessionId}?format=${format}`)
      .set('x-api-key', alice.apiKey)
      .buffer(true)
      .parse(textBody);

  /** Checks the files, then re-imports every nchat one; returns the problems found, by export. */
  async function problemsOf(files: Array<{ format: string; content: string; label: string }>) {
    const problems: string[] = [];
    for (const { format, content, label } of files) {
      const found = format === 'nchat' ? nchatProblems(JSON.parse(content)) : extJsonlProblems(content);
      if (found.length > 0) problems.push(`${label}: ${found.slice(0, 3).join('; ')}`);
      if (format !== 'nchat') continue;
      const imported = await t.http
        .post('/import/chat')
        .set('x-api-key', alice.apiKey)
        .send({ data: content });
      if (imported.status !== 201)
        problems.push(`${label}: re-import ${imported.status} ${imported.body?.error?.code ?? ''}`);
    }
    return problems;
  }

  it('GET /export/chat/:id: every nchat re-imports and every ext_jsonl holds a whole main lineage', async () => {
    const busy = await busySession('Busy chat');
    const files: Array<{ format: string; content: string; label: string }> = [];
    let turns: number;
    try {
      // A few at a time: their reads queue for the pool's connections meanwhile, as under load.
      for (let i = 0; i < EXPORTS_PER_FORMAT; i += PARALLEL_EXPORTS) {
        const batch = Array.from({ length: PARALLEL_EXPORTS }, (_, k) => i + k).flatMap((n) =>
          ['nchat', 'ext_jsonl'].map(async (format) => {
            const res = await exportChat(busy.session.id, format);
            expect(res.status).toBe(200);
            return { format, content: res.body as string, label: `${format} export ${n}` };
          }),
        );
        files.push(...(await Promise.all(batch)));
      }
    } finally {
      turns = await busy.stop();
    }
    // The exports ran while turns committed, not after the writers were done.
    expect(turns).toBeGreaterThan(INITIAL_TURNS + EXPORTS_PER_FORMAT);
    expect(turns).toBeLessThan(MAX_TURNS);
    expect(await problemsOf(files)).toEqual([]);
  });

  it('POST /export/chat/:id/jobs: every job file is whole too', async () => {
    const busy = await busySession('Busy chat (jobs)');
    const files: Array<{ format: string; content: string; label: string }> = [];
    let turns: number;
    try {
      const jobIds: Array<{ format: string; id: string }> = [];
      for (let i = 0; i < JOBS_PER_FORMAT; i++) {
        for (const format of ['nchat', 'ext_jsonl']) {
          const res = await t.http
            .post(`/export/chat/${busy.session.id}/jobs`)
            .set('x-api-key', alice.apiKey)
            .send({ format });
          expect(res.status).toBe(202);
          jobIds.push({ format, id: res.body.data.job_id as string });
        }
      }
      for (const { format, id } of jobIds) {
        const job = await waitForChatTransferJob(t, alice.apiKey, id);
        expect(job.status).toBe('succeeded');
        const file = await t.http
          .get(`/chat-transfer-jobs/${id}/file`)
          .set('x-api-key', alice.apiKey)
          .buffer(true)
          .parse(textBody);
        expect(file.status).toBe(200);
        files.push({ format, content: file.body as string, label: `${format} job ${id}` });
      }
    } finally {
      turns = await busy.stop();
    }
    expect(turns).toBeGreaterThan(INITIAL_TURNS + JOBS_PER_FORMAT);
    expect(turns).toBeLessThan(MAX_TURNS);
    expect(await problemsOf(files)).toEqual([]);
  });
});
