import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CleanupExpiredInjectionsUseCase, RunMaintenanceScanUseCase } from '@hearth/app';
import { operationLogsRepository, type SessionRow } from '@hearth/persistence';
import { pingWorkers } from '../../apps/worker/src/ping';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { createOwnedSession } from '../support/factories/accounts';
import { createAccountCaller } from '../support/factories/members';
import {
  expireInjection,
  fillInjections,
  injectionRows,
  materialisedMain,
} from '../support/factories/prompt-runtime';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/** The `prompt_injection.cleanup_expired` maintenance step, run through the worker's maintenance scan. */
describe('maintenance: expired prompt injections', () => {
  let t: TestApp;
  let worker: INestApplicationContext;

  const db = () => t.resources.database.db;
  const create = async (s: { id: string }, body: Record<string, unknown>, branchId?: string) => {
    const url = branchId
      ? `/sessions/${s.id}/prompt-runtime/branches/${branchId}/injections`
      : `/sessions/${s.id}/prompt-runtime/injections`;
    const res = await t.http
      .post(url)
      .set('x-api-key', ADMIN_KEY)
      .send({
        source_kind: 'client_injection',
        title: 'T',
        content: 'Secret words',
        placement: 'after_history',
        ...body,
      });
    expect(res.status).toBe(201);
    return res.body.data as { id: string };
  };
  const cleanupLogs = async (accountId: string) =>
    (
      await operationLogsRepository.list(
        db(),
        { accountId, filters: {} },
        { limit: 500, offset: 0, sortOrder: 'asc' },
      )
    ).filter((l) => l.action === 'prompt_injection.cleanup_expired');

  beforeAll(async () => {
    t = await startTestApp();
    worker = await NestFactory.createApplicationContext(WorkerModule.register(t.resources), {
      logger: false,
    });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
  });

  it('deletes expired records of every account and logs counts only, once per account', async () => {
    const s: SessionRow = (await findSessionRow(t, (await createSession(t)).id))!;
    const main = await materialisedMain(t, s);
    const keep = await create(s, {});
    const keepTtl = await create(s, { ttl_ms: 3_600_000 });
    const gone1 = await create(s, { ttl_ms: 1000 });
    const gone2 = await create(s, { ttl_ms: 1000 }, main.id);
    await expireInjection(t, gone1.id);
    await expireInjection(t, gone2.id);

    // Another account's expired record.
    const other = await createAccountCaller(t, { name: 'Other' });
    const otherSession = await createOwnedSession(t, other.accountId);
    await fillInjections(t, otherSession, 1);
    await expireInjection(t, (await injectionRows(t, otherSession.id))[0].id);

    const result = await worker.get(RunMaintenanceScanUseCase).execute();
    const step = result.steps.find((x) => x.step === 'prompt_injection_cleanup');
    expect(step).toEqual({
      step: 'prompt_injection_cleanup',
      ok: true,
      summary: { deleted: 3, accounts: 2 },
    });

    expect((await injectionRows(t, s.id)).map((r) => r.id).sort()).toEqual([keep.id, keepTtl.id].sort());
    expect(await injectionRows(t, otherSession.id)).toEqual([]);

    const logs = await cleanupLogs('default');
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      actor_type: 'system',
      status: 'succeeded',
      target_type: 'prompt_injection',
      metadata: { deleted_count: 2, session_count: 1, session_scope_count: 1, branch_scope_count: 1 },
    });
    expect(JSON.stringify(logs[0])).not.toContain('Secret words');
    expect((await cleanupLogs(other.accountId))[0].metadata).toEqual({
      deleted_count: 1,
      session_count: 1,
      session_scope_count: 1,
      branch_scope_count: 0,
    });

    // Nothing left to delete: the next scan deletes and logs nothing.
    expect(await worker.get(CleanupExpiredInjectionsUseCase).execute()).toEqual({ deleted: 0, accounts: 0 });
    expect(await cleanupLogs('default')).toHaveLength(1);
  });

  it('parallel scans delete each expired record once', async () => {
    const s = (await findSessionRow(t, (await createSession(t)).id))!;
    const rows = [];
    for (let i = 0; i < 10; i++) rows.push(await create(s, { ttl_ms: 1000 }));
    for (const row of rows) await expireInjection(t, row.id);
    const cleanup = worker.get(CleanupExpiredInjectionsUseCase);
    const countedBefore = (await cleanupLogs('default')).length;
    const results = await Promise.all([cleanup.execute(), cleanup.execute(), cleanup.execute()]);
    expect(results.reduce((n, r) => n + r.deleted, 0)).toBe(10);
    expect(await injectionRows(t, s.id)).toEqual([]);
    // The scans that deleted something logged the 10 between them, each row counted once.
    const counted = (await cleanupLogs('default'))
      .slice(countedBefore)
      .map((l) => (l.metadata as { deleted_count: number }).deleted_count);
    expect(counted.reduce((a, b) => a + b, 0)).toBe(10);
    expect(counted).toHaveLength(results.filter((r) => r.deleted > 0).length);
  });

  it('the step does not stop the operators ping module from starting (JobsModule without CoreAppModule)', async () => {
    const row = await pingWorkers(t.resources, 0);
    expect(row.name).toBe('system.ping');
  });
});
