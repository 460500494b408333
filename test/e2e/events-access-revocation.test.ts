import { ProjectEventWriter } from '@hearth/app';
import {
  inTransaction,
  membersRepository,
  projectEventsRepository,
  type ProjectRow,
} from '@hearth/persistence';
import { appendEvents } from '../support/factories/events';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { SseClient, sequencesOf, type SseMessage } from '../support/sse-client';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/**
 * Issue 7 item 1: a caller who loses access to a Project loses its open streams too. A removed
 * member's stream ends at once (the hub sees `project_member.removed` and re-checks); a disabled
 * account or Client is caught by the safety poll. The stream ends with `event: error`
 * `project_access_revoked`, and reconnecting is refused like any other request.
 */
const errorOf = (client: SseClient): { code: string; message: string } | null => {
  const error = client.messages.find((m: SseMessage) => m.event === 'error');
  return error ? (JSON.parse(error.data) as { code: string; message: string }) : null;
};

describe('event streams end when access is lost', () => {
  const clients: SseClient[] = [];
  const connect = async (t: TestApp, projectId: string, key: string, lastEventId?: string) => {
    const headers: Record<string, string> = { 'x-api-key': key };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const client = await SseClient.connect(`${t.baseUrl}/projects/${projectId}/events/stream`, { headers });
    clients.push(client);
    return client;
  };
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  describe('member removal (at once, long before the safety poll)', () => {
    let t: TestApp;
    let owner: Caller;
    let observer: Caller;
    let project: ProjectRow;

    beforeAll(async () => {
      // A poll far longer than the test's waits: only the removal itself can end the streams.
      t = await startTestApp({ env: { EVENT_STREAM_POLL_MS: '600000' } });
      owner = await createAccountCaller(t, { name: 'Owner' });
      observer = await createAccountCaller(t, { name: 'Observer' });
    });
    beforeEach(async () => {
      project = await createProject(t, { accountId: owner.accountId });
    });
    afterAll(async () => {
      await t.close();
    });

    const removeMember = (path: string) =>
      t.http.delete(`/projects/${project.id}/members/${path}`).set('x-api-key', owner.apiKey).expect(200);

    it("ends a removed observer's stream and keeps the owner's stream on the Project running", async () => {
      await addMember(t, project, observer, 'observer');
      await appendEvents(t, project, 2);
      const watched = await connect(t, project.id, observer.apiKey);
      const owned = await connect(t, project.id, owner.apiKey);
      expect([watched.status, owned.status]).toEqual([200, 200]);
      await watched.waitForEvents(2);
      await owned.waitForEvents(2);

      await removeMember(`account/${observer.accountId}`);
      await watched.waitForEnd(3_000);
      expect(errorOf(watched)).toEqual({
        code: 'project_access_revoked',
        message: expect.any(String),
      });
      expect(sequencesOf(watched.messages)).toEqual([1, 2]);

      // The owner saw the removal (an owner event) and keeps receiving.
      const [after] = await appendEvents(t, project, 1);
      await owned.waitFor(
        (c) => sequencesOf(c.messages).includes(after.sequence),
        5_000,
        'the event after the removal',
      );
      expect(owned.ended).toBe(false);
      expect(owned.messages.map((m) => m.event)).toContain('project_member.removed');
      expect(errorOf(owned)).toBeNull();
      expect(watched.messages.map((m) => m.event)).not.toContain('project_member.removed');
    });

    it("ends a removed Client member's stream but not its account's other streams", async () => {
      const bot = await createClientCaller(t, observer.accountId, 'Observer bot');
      await addMember(t, project, bot, 'deriver', { as: 'client' });
      await addMember(t, project, observer, 'observer', { as: 'account' });
      const botStream = await connect(t, project.id, bot.apiKey);
      const accountStream = await connect(t, project.id, observer.apiKey);
      expect([botStream.status, accountStream.status]).toEqual([200, 200]);

      await removeMember(`client/${bot.clientId}`);
      await botStream.waitForEnd(3_000);
      expect(errorOf(botStream)?.code).toBe('project_access_revoked');

      // The account's own membership still stands: its stream was re-checked and kept.
      const [after] = await appendEvents(t, project, 1);
      await accountStream.waitFor(
        (c) => sequencesOf(c.messages).includes(after.sequence),
        5_000,
        'the event after the Client removal',
      );
      expect(accountStream.ended).toBe(false);
      expect(errorOf(accountStream)).toBeNull();
    });

    it('holds back what follows the removal in the same commit: the removed member never gets it', async () => {
      const member = await addMember(t, project, observer, 'observer');
      const colleague = await createAccountCaller(t, { name: 'Colleague' });
      await addMember(t, project, colleague, 'observer');
      const watched = await connect(t, project.id, observer.apiKey);
      const kept = await connect(t, project.id, colleague.apiKey);
      expect([watched.status, kept.status]).toEqual([200, 200]);
      await new Promise((r) => setTimeout(r, 100));

      // The removal and a later project event commit together, so they reach the hub as one batch.
      const writer = t.app.get(ProjectEventWriter);
      await inTransaction(t.resources.database.db, async (uow) => {
        await membersRepository.markRemoved(uow.tx, member.id, Date.now());
        for (const [type, visibility] of [
          ['project_member.removed', 'owner'],
          ['test.after_removal', 'project'],
        ] as const) {
          await writer.record(uow, {
            project: { id: project.id, workspace_id: project.workspace_id },
            type,
            visibility,
            payload: {
              member_id: member.id,
              role: 'observer',
              subject_type: 'account',
              subject_id: observer.accountId,
              account_id: observer.accountId,
              client_id: null,
            },
          });
        }
      });
      await watched.waitForEnd(3_000);
      expect(errorOf(watched)?.code).toBe('project_access_revoked');
      expect(watched.messages.map((m) => m.event)).toEqual(['error']);
      await kept.waitForEvents(1, 5_000);
      expect(kept.messages.map((m) => m.event)).toEqual(['test.after_removal']);
      expect(kept.ended).toBe(false);
    });

    it('answers a reconnect after the removal with 404 project_not_found', async () => {
      await addMember(t, project, observer, 'observer');
      await appendEvents(t, project, 1);
      const first = await connect(t, project.id, observer.apiKey);
      await first.waitForEvents(1);
      await removeMember(`account/${observer.accountId}`);
      await first.waitForEnd(3_000);

      const again = await connect(t, project.id, observer.apiKey, first.lastId ?? '0');
      expect(again.status).toBe(404);
      await again.waitForEnd(3_000);
      expect(JSON.parse(again.body).error.code).toBe('project_not_found');
    });
  });

  describe('disabled credentials (on the next safety poll)', () => {
    let t: TestApp;
    let project: ProjectRow;

    beforeAll(async () => {
      t = await startTestApp({ env: { ACCOUNT_MODE: 'multi', EVENT_STREAM_POLL_MS: '200' } });
    });
    beforeEach(async () => {
      project = await createProject(t);
    });
    afterAll(async () => {
      await t.close();
    });

    it("ends a disabled account's stream within the poll interval, and keeps the others", async () => {
      const observer = await createAccountCaller(t, { name: 'Soon disabled' });
      await addMember(t, project, observer, 'observer');
      const watched = await connect(t, project.id, observer.apiKey);
      const owned = await connect(t, project.id, ADMIN_KEY);
      expect([watched.status, owned.status]).toEqual([200, 200]);
      // Several polls pass while access holds: nothing ends.
      await new Promise((r) => setTimeout(r, 500));
      expect(watched.ended).toBe(false);

      await t.http
        .patch(`/accounts/${observer.accountId}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'disabled' })
        .expect(200);
      await watched.waitForEnd(2_000);
      expect(errorOf(watched)?.code).toBe('project_access_revoked');

      await appendEvents(t, project, 1);
      await owned.waitForEvents(1, 5_000);
      expect(owned.ended).toBe(false);
      const again = await connect(t, project.id, observer.apiKey);
      expect(again.status).toBe(403);
    });

    it('re-checks all open streams in one batch per poll: one status read, one read per caller', async () => {
      const observer = await createAccountCaller(t, { name: 'Batched observer' });
      const other = await createProject(t);
      await addMember(t, project, observer, 'observer');
      const statusReads = jest.spyOn(projectEventsRepository, 'activeClientIds');
      const accessReads = jest.spyOn(projectEventsRepository, 'readableProjectIds');
      try {
        const streams = await Promise.all([
          connect(t, project.id, ADMIN_KEY),
          connect(t, project.id, ADMIN_KEY),
          connect(t, other.id, ADMIN_KEY),
          connect(t, project.id, observer.apiKey),
        ]);
        expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200]);
        statusReads.mockClear();
        accessReads.mockClear();
        await new Promise((r) => setTimeout(r, 1_000));
        const polls = statusReads.mock.calls.length;
        expect(polls).toBeGreaterThanOrEqual(2);
        // Four streams, two callers: each poll reads both callers' status at once, then one
        // access read per caller (the admin's covering both of its Projects).
        for (const [, clientIds] of statusReads.mock.calls) {
          expect([...clientIds].sort()).toEqual([...new Set(clientIds)].sort());
          expect(clientIds).toHaveLength(2);
        }
        expect(accessReads.mock.calls.length).toBeLessThanOrEqual(2 * polls + 2);
        const adminReads = accessReads.mock.calls.filter(
          ([, subject]) => subject.clientId !== observer.clientId,
        );
        expect([...adminReads[0][2]].sort()).toEqual([project.id, other.id].sort());
        expect(streams.every((s) => !s.ended)).toBe(true);
      } finally {
        statusReads.mockRestore();
        accessReads.mockRestore();
      }
    });

    it("ends a disabled Client's stream within the poll interval", async () => {
      const owner = await createAccountCaller(t, { name: 'Client owner' });
      const bot = await createClientCaller(t, owner.accountId, 'Soon disabled bot');
      await addMember(t, project, bot, 'observer', { as: 'client' });
      const watched = await connect(t, project.id, bot.apiKey);
      expect(watched.status).toBe(200);

      await t.http
        .patch(`/clients/${bot.clientId}`)
        .set('x-api-key', owner.apiKey)
        .send({ status: 'disabled' })
        .expect(200);
      await watched.waitForEnd(2_000);
      expect(errorOf(watched)?.code).toBe('project_access_revoked');
    });
  });
});
