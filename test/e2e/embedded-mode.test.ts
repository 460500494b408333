import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobsRepository, openDatabase } from '@hearth/persistence';
import { ensureBuiltApi, startBuiltApi, type BuiltApi } from '../support/built-api';

jest.setTimeout(180_000);

/** `npm start`'s process (`main.js --all-in-one`) with neither DATABASE_URL nor REDIS_URL. */
function startAllInOne(dataDir: string): Promise<BuiltApi> {
  return startBuiltApi({
    args: ['--all-in-one'],
    env: { HEARTH_DATA_DIR: dataDir },
    unset: ['DATABASE_URL', 'REDIS_URL', 'BOOTSTRAP_ADMIN_API_KEY', 'HOST', 'ENABLE_RUNTIME_MAINTENANCE'],
  });
}

describe('embedded mode: npm start with neither DATABASE_URL nor REDIS_URL', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-embedded-'));
  const running: BuiltApi[] = [];

  beforeAll(() => ensureBuiltApi());

  afterAll(async () => {
    for (const started of running) if (started.child.exitCode === null) started.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  let adminKey = '';
  const pingJobs: string[] = [];

  it('first start: prints the URL and a generated admin key, is ready on PGlite + in-process, runs a job and creates a session', async () => {
    const first = await startAllInOne(dataDir);
    running.push(first);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const listening = JSON.parse(first.lines.find((l) => l.includes('Hearth API listening'))!);
    expect(listening).toMatchObject({
      mode: 'all-in-one',
      database: 'pglite',
      event_bus: 'in-process',
      job_queue: 'in-process',
    });

    const keyLine = await first.waitForLine(/Admin API key \(shown once, keep it\): /);
    adminKey = keyLine.split(': ').pop()!.trim();
    expect(adminKey.length).toBeGreaterThanOrEqual(16);
    expect(first.lines.some((l) => l.includes(`Hearth is running at ${first.url}`))).toBe(true);

    const ready = await fetch(`${first.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { database: { ok: true, kind: 'pglite' }, event_bus: { ok: true, kind: 'in-process' } },
    });

    // The worker's consumers run in this process: its start-up system.ping went through the in-process queue.
    const ping = JSON.parse(await first.waitForLine(/"msg":"worker self-check passed"/));
    expect(ping.result).toEqual({ pong: true });
    pingJobs.push(ping.job_id);
    const started = JSON.parse(first.lines.find((l) => l.includes('"msg":"worker started"'))!);
    expect(started).toMatchObject({ queues: ['system', 'chat'], transport: 'in-process' });

    const created = await fetch(`${first.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': adminKey },
      body: JSON.stringify({ title: 'Embedded mode' }),
    });
    expect(created.status).toBe(201);
    const session = (await created.json()) as { data: { id: string; title: string } };
    expect(session.data).toMatchObject({ title: 'Embedded mode' });
    expect(session.data.id).toMatch(/^ses_/);

    expect(await first.stop()).toBe(0);
    expect(first.lines.some((l) => l.includes('"msg":"worker stopped"'))).toBe(true);
  });

  it('second start on the same data dir: no new key is printed and the first key still works', async () => {
    expect(adminKey).not.toBe('');
    const second = await startAllInOne(dataDir);
    running.push(second);
    const ping = JSON.parse(await second.waitForLine(/"msg":"worker self-check passed"/));
    pingJobs.push(ping.job_id);
    expect(second.lines.some((l) => l.includes('Admin API key'))).toBe(false);

    const list = await fetch(`${second.url}/sessions`, { headers: { 'x-api-key': adminKey } });
    expect(list.status).toBe(200);
    const sessions = (await list.json()) as { data: Array<{ title: string }> };
    expect(sessions.data.map((s) => s.title)).toContain('Embedded mode');
    expect(await second.stop()).toBe(0);
  });

  it('kept both runs’ ping jobs in the embedded database as succeeded ledger rows', async () => {
    const database = await openDatabase({ url: null, dataDir });
    try {
      for (const id of pingJobs) {
        expect(await jobsRepository.findById(database.db, id)).toMatchObject({
          name: 'system.ping',
          status: 'succeeded',
          attempt_count: 1,
          result: { pong: true },
        });
      }
    } finally {
      await database.close();
    }
  });
});
