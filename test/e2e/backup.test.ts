import {
  OperationLogWriter,
  parseAccountBackup,
  PurgeExpiredFilesUseCase,
  restoreBackupInTransaction,
} from '@hearth/app';
import { ProjectAccess } from '@hearth/permissions';
import {
  backupRepository,
  inTransaction,
  operationLogsRepository,
  type OperationLogRow,
} from '@hearth/persistence';
import { sql } from 'kysely';
import { startWorker, type WorkerHandle } from '../../apps/worker/src/worker-runtime';
import { characterCard, importCharacter } from '../support/factories/characters';
import { extJsonlChat, nchatFile, textBody } from '../support/factories/chat-transfer';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { importPreset, importRegexProfile } from '../support/factories/presets';
import { createUserCard } from '../support/factories/user-cards';
import { generateWorldbook, importWorldbook } from '../support/factories/worldbooks';
import { REDIS_URL } from '../support/postgres-admin';
import { deleteQueueKeys } from '../support/private-redis';
import { startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(90_000);

type Json = Record<string, any>;

/** The restore size limit of these tests (`CHAT_IMPORT_MAX_BYTES`). */
const MAX_BYTES = 300_000;

/**
 * Account backups (spec 3 "Backup", docs/decisions.md "Backup"): `POST /backup/jobs/export` with each
 * `include_operation_logs` mode and `include_vc_tags`, the file, `POST /backup/jobs/restore` into another
 * account and into the same one (every id new, every reference mapped, clashing names ` (restored)`,
 * logs with new ids and groups, no request id, the original in `metadata.restore.source`), refused
 * bodies that write nothing, and other accounts' and Clients' jobs answering 404.
 */
describe('Backup export and restore', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  let bob: Caller;
  let seed: Seed;

  interface Seed {
    characterId: string;
    characterV1: string;
    characterV2: string;
    presetId: string;
    regexId: string;
    worldbookId: string;
    cards: Json[];
    chatSessionId: string;
    jsonlSessionId: string;
    floorTagId: string;
    versionTagId: string;
    goneTagId: string;
    taggedFloorId: string;
  }

  const db = () => t.resources.database.db;
  const get = (path: string, key = alice.apiKey) => t.http.get(path).set('x-api-key', key);
  const post = (path: string, body: Json, key = alice.apiKey) =>
    t.http.post(path).set('x-api-key', key).send(body);
  const getFile = (id: string, key = alice.apiKey) =>
    t.http.get(`/backup/jobs/${id}/file`).set('x-api-key', key).buffer(true).parse(textBody);

  async function waitForJob(id: string, key = alice.apiKey): Promise<Json> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await get(`/backup/jobs/${id}`, key);
      if (res.status !== 200) throw new Error(`GET /backup/jobs/${id} answered ${res.status}`);
      const job = res.body.data as Json;
      if (job.status === 'succeeded' || job.status === 'dead_letter') return job;
      if (Date.now() > deadline) throw new Error(`backup job ${id} still ${job.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Runs an export and answers the job and the parsed document. */
  async function exportBackup(body: Json = {}, key = alice.apiKey): Promise<{ job: Json; doc: Json }> {
    const res = await post('/backup/jobs/export', body, key);
    expect(res.status).toBe(202);
    const job = await waitForJob(res.body.data.job_id, key);
    expect(job.status).toBe('succeeded');
    const file = await getFile(job.job_id, key);
    expect(file.status).toBe(200);
    return { job, doc: JSON.parse(file.body as unknown as string) };
  }

  async function restore(body: Json, key: string): Promise<Json> {
    const res = await post('/backup/jobs/restore', body, key);
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({
      job_id: expect.stringMatching(/^job_/),
      status: 'pending',
      job_kind: 'restore_backup',
    });
    const job = await waitForJob(res.body.data.job_id, key);
    expect(job).toMatchObject({ status: 'succeeded', error: null });
    return job;
  }

  const logsOf = (accountId: string): Promise<OperationLogRow[]> =>
    operationLogsRepository.list(
      db(),
      { accountId, filters: {} },
      { limit: 10_000, offset: 0, sortOrder: 'asc' },
    );

  /** What an account holds, to check that a refused restore wrote nothing. */
  async function holdings(caller: Caller) {
    const [characters, sessions, tags, users, jobs] = await Promise.all([
      get('/characters?limit=200', caller.apiKey),
      get('/sessions?limit=200', caller.apiKey),
      get('/vc-tags?limit=200', caller.apiKey),
      get('/users?limit=200', caller.apiKey),
      backupRepository.listSessions(db(), caller.accountId),
    ]);
    return {
      characters: characters.body.meta.total,
      sessions: sessions.body.meta?.total ?? sessions.body.data.length,
      tags: tags.body.meta.total,
      users: users.body.meta.total,
      session_rows: jobs.length,
      logs: (await logsOf(caller.accountId)).length,
    };
  }

  /** An nchat export with every id and ref left out, for comparing transcripts across accounts. */
  async function transcript(sessionId: string, key: string): Promise<unknown> {
    const res = await t.http
      .get(`/export/chat/${sessionId}`)
      .set('x-api-key', key)
      .buffer(true)
      .parse(textBody);
    expect(res.status).toBe(200);
    const strip = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(strip);
      if (value && typeof value === 'object') {
        return Object.fromEntries(
          Object.entries(value)
            .filter(
              ([k]) =>
                !['_original_id', 'exported_at', 'character_id', 'character_version_id'].includes(k) &&
                !/_refs?$/.test(k),
            )
            .map(([k, v]) => [k, strip(v)]),
        );
      }
      return value;
    };
    const file = JSON.parse(res.body as unknown as string);
    return strip(file);
  }

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_IMPORT_MAX_BYTES: String(MAX_BYTES) } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });

    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ name: 'Hero', description: 'first' }),
    });
    const patched = await t.http
      .patch(`/characters/${character.id}`)
      .set('x-api-key', alice.apiKey)
      .send({ data: { description: 'second' } });
    expect(patched.status).toBe(200);
    const preset = await importPreset(t, alice.apiKey, { name: 'Preset A' });
    const regex = await importRegexProfile(t, alice.apiKey, { name: 'Regex A' });
    const worldbook = await importWorldbook(t, alice.apiKey, generateWorldbook(3), 'Lore A');
    const goneAsset = await importPreset(t, alice.apiKey, { name: 'Gone' });
    const cards = [
      await createUserCard(t, alice.apiKey, { name: 'Persona One', description: 'p1' }),
      await createUserCard(t, alice.apiKey, { name: 'Persona Two' }),
    ];
    // One batch: two logs sharing one operation_group_id.
    const batch = await t.http
      .patch('/users/batch/status')
      .set('x-api-key', alice.apiKey)
      .send({ ids: cards.map((c) => c.id), status: 'disabled' });
    expect(batch.status).toBe(200);

    const file = nchatFile(
      [
        { input: { content: 'hello' }, output: { content: 'hi there' } },
        { input: { content: 'second' }, output: { content: 'reply two' } },
      ],
      {
        variables: [
          { scope: 'chat', scope_id_ref: null, key: 'mood', value: 'calm', updated_at: 1_700_000_000_000 },
        ],
      },
    );
    const chat = await post('/import/chat', { data: JSON.stringify(file), character_id: character.id });
    expect(chat.status).toBe(201);
    const jsonl = await post('/import/chat', { data: extJsonlChat(2) });
    expect(jsonl.status).toBe(201);
    const floors = await get(`/sessions/${chat.body.data.session_id}/floors`);
    const taggedFloor = floors.body.data[1];

    const floorTag = await post('/vc-tags', {
      name: 'milestone',
      target_type: 'floor',
      target_id: taggedFloor.id,
      metadata: { note: 'x' },
    });
    expect(floorTag.status).toBe(201);
    const versionTag = await post('/vc-tags', {
      name: 'first cut',
      target_type: 'asset_version',
      target_id: character.versionId,
    });
    expect(versionTag.status).toBe(201);
    const goneTag = await post('/vc-tags', {
      name: 'gone',
      target_type: 'asset_version',
      target_id: goneAsset.latest_version_id,
    });
    expect(goneTag.status).toBe(201);
    expect(
      (await t.http.delete(`/presets/${goneAsset.id}`).set('x-api-key', alice.apiKey)).status,
    ).toBeLessThan(300);

    const versions = await get(`/characters/${character.id}/versions`);
    seed = {
      characterId: character.id,
      characterV1: character.versionId,
      characterV2: versions.body.data.find((v: Json) => v.id !== character.versionId).id,
      presetId: preset.id,
      regexId: regex.id,
      worldbookId: worldbook.id,
      cards,
      chatSessionId: chat.body.data.session_id,
      jsonlSessionId: jsonl.body.data.session_id,
      floorTagId: floorTag.body.data.id,
      versionTagId: versionTag.body.data.id,
      goneTagId: goneTag.body.data.id,
      taggedFloorId: taggedFloor.id,
    };
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  describe('export', () => {
    it('defaults: no logs, tags whose targets are exported; the job, then the file as a JSON download', async () => {
      const res = await post('/backup/jobs/export', {});
      expect(res.status).toBe(202);
      expect(res.body.data).toEqual({
        job_id: expect.stringMatching(/^job_/),
        status: 'pending',
        job_kind: 'export_backup',
      });
      const job = await waitForJob(res.body.data.job_id);
      expect(job).toMatchObject({
        status: 'succeeded',
        job_kind: 'export_backup',
        options: { include_operation_logs: 'none', include_vc_tags: true },
        output_expires_at: expect.any(Number),
        error: null,
      });
      expect(job.result.counts).toMatchObject({
        characters: 1,
        character_versions: 2,
        presets: 1,
        regex_profiles: 1,
        worldbooks: 1,
        worldbook_entries: 3,
        user_cards: 2,
        sessions: 2,
        vc_tags: 2,
        operation_logs: 0,
      });
      const file = await getFile(job.job_id);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(file.headers['content-disposition']).toMatch(
        /^attachment; filename="hearth-backup-\d{4}-\d\d-\d\d\.json"/,
      );
      const doc = JSON.parse(file.body as unknown as string);
      expect(doc).toMatchObject({
        spec: 'hearth_backup',
        spec_version: '1.0.0',
        options: { include_operation_logs: 'none', include_vc_tags: true },
      });
      // No account id anywhere in the file.
      expect(file.body as unknown as string).not.toContain(alice.accountId);
      expect(doc.data.operation_logs).toEqual([]);
      expect(doc.data.vc_tags.map((tag: Json) => tag._original_id).sort()).toEqual(
        [seed.floorTagId, seed.versionTagId].sort(),
      );
      const character = doc.data.characters[0];
      expect(character.versions.map((v: Json) => v._original_id)).toEqual([
        seed.characterV1,
        seed.characterV2,
      ]);
      const session = doc.data.sessions.find((s: Json) => s._original_id === seed.chatSessionId);
      expect(session).toMatchObject({
        character_id_ref: seed.characterId,
        character_version_id_ref: seed.characterV2,
      });
      expect(session.chat.spec).toBe('native_chat');
      expect(session.chat.data.variables).toEqual([expect.objectContaining({ key: 'mood', value: 'calm' })]);
    });

    it('include_vc_tags false exports no tag', async () => {
      const { doc } = await exportBackup({ include_vc_tags: false });
      expect(doc.data.vc_tags).toEqual([]);
      expect(doc.options.include_vc_tags).toBe(false);
    });

    it('referenced: exactly the logs that made exported versions and tags', async () => {
      const { doc } = await exportBackup({ include_operation_logs: 'referenced' });
      const madeBy = new Set<string>();
      for (const kind of ['characters', 'presets', 'regex_profiles', 'worldbooks']) {
        for (const asset of doc.data[kind]) {
          for (const v of asset.versions)
            if (v.created_by_operation_id_ref) madeBy.add(v.created_by_operation_id_ref);
        }
      }
      for (const tag of doc.data.vc_tags) madeBy.add(tag.created_by_operation_id_ref);
      const ids = doc.data.operation_logs.map((l: Json) => l._original_id);
      expect(new Set(ids)).toEqual(madeBy);
      const actions = doc.data.operation_logs.map((l: Json) => l.action);
      expect(actions.filter((a: string) => a === 'create_tag')).toHaveLength(2);
      expect(actions).not.toContain('import_chat');
      expect(actions).not.toContain('batch_update_user_card_status');

      // Without tags, their create_tag logs are not referenced any more.
      const noTags = await exportBackup({ include_operation_logs: 'referenced', include_vc_tags: false });
      expect(noTags.doc.data.operation_logs.map((l: Json) => l.action)).not.toContain('create_tag');
    });

    it('selected_scope: logs of exported sessions, floors, assets, versions, user cards and tags, no others', async () => {
      const { doc } = await exportBackup({ include_operation_logs: 'selected_scope' });
      const logs = doc.data.operation_logs as Json[];
      const actions = logs.map((l) => l.action);
      expect(actions).toEqual(
        expect.arrayContaining([
          'import_chat',
          'create_session',
          'create_tag',
          'batch_update_user_card_status',
          'import_character',
          'update_character',
        ]),
      );
      // The deleted preset and its tag are not exported, and neither are their logs.
      const all = await logsOf(alice.accountId);
      const gone = all.filter((l) => l.action === 'delete_preset' || l.target_id === seed.goneTagId);
      expect(gone.length).toBeGreaterThan(0);
      for (const log of gone) expect(logs.map((l) => l._original_id)).not.toContain(log.id);
      // Earlier backup exports are not in scope.
      expect(actions).not.toContain('export_backup');
      // Every exported log is the account's and related to the scope; an account actor carries no id.
      for (const log of logs) {
        expect(all.map((l) => l.id)).toContain(log._original_id);
        if (log.actor_type === 'account') expect(log.actor_id).toBeNull();
      }
      const batch = logs.filter((l) => l.action === 'batch_update_user_card_status');
      expect(batch).toHaveLength(2);
      expect(batch[0].operation_group_id).toBe(batch[1].operation_group_id);
      expect(batch[0].operation_group_id).toEqual(expect.any(String));
    });

    it('refuses a bad body (400 validation_error) and a non-default Client (403 project_access_denied)', async () => {
      for (const body of [{ include_operation_logs: 'all' }, { include_vc_tags: 'yes' }, { extra: 1 }]) {
        const res = await post('/backup/jobs/export', body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
      }
      const client = await createClientCaller(t, alice.accountId);
      const res = await post('/backup/jobs/export', {}, client.apiKey);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('project_access_denied');
    });
  });

  describe('restore', () => {
    it('into another account: new ids everywhere, every reference mapped, logs restored', async () => {
      const { doc } = await exportBackup({ include_operation_logs: 'selected_scope' });
      const before = await logsOf(bob.accountId);
      const job = await restore({ document: doc }, bob.apiKey);
      const result = job.result;
      expect(result.counts).toMatchObject({
        characters: 1,
        character_versions: 2,
        sessions: 2,
        vc_tags: 2,
        user_cards: 2,
        operation_logs: doc.data.operation_logs.length,
      });
      expect(result.renamed).toEqual({ vc_tags: [], user_cards: [] });
      for (const map of Object.values(result.id_map) as Array<Record<string, string>>) {
        for (const [from, to] of Object.entries(map)) expect(to).not.toBe(from);
      }

      // Sessions: same transcript, bound to the restored character and its restored version.
      const sessionId = result.id_map.sessions[seed.chatSessionId];
      expect(await transcript(sessionId, bob.apiKey)).toEqual(
        await transcript(seed.chatSessionId, alice.apiKey),
      );
      const jsonlId = result.id_map.sessions[seed.jsonlSessionId];
      expect(await transcript(jsonlId, bob.apiKey)).toEqual(
        await transcript(seed.jsonlSessionId, alice.apiKey),
      );
      const session = await get(`/sessions/${sessionId}`, bob.apiKey);
      const characterId = result.id_map.characters[seed.characterId];
      expect(session.body.data).toMatchObject({ character_id: characterId, title: expect.any(String) });
      expect(session.body.data.character_version_id).not.toBe(seed.characterV2);

      // Characters: the same versions, in order, with new ids.
      const [theirs, ours] = await Promise.all([
        get(`/characters/${seed.characterId}/versions`),
        get(`/characters/${characterId}/versions`, bob.apiKey),
      ]);
      expect(ours.body.data.map((v: Json) => v.version_no)).toEqual(
        theirs.body.data.map((v: Json) => v.version_no),
      );
      for (const [i, v] of ours.body.data.entries()) {
        expect(v.id).not.toBe(theirs.body.data[i].id);
        const [a, b] = await Promise.all([
          get(`/characters/${seed.characterId}/versions/${theirs.body.data[i].id}`),
          get(`/characters/${characterId}/versions/${v.id}`, bob.apiKey),
        ]);
        expect(b.body.data.payload).toEqual(a.body.data.payload);
      }
      expect(session.body.data.character_version_id).toBe(ours.body.data[0].id);

      // Presets, regex profiles, worldbooks and user cards export the same.
      for (const [kind, id] of [
        ['preset', seed.presetId],
        ['regex', seed.regexId],
        ['worldbook', seed.worldbookId],
      ] as const) {
        const map = kind === 'preset' ? 'presets' : kind === 'regex' ? 'regex_profiles' : 'worldbooks';
        const [a, b] = await Promise.all([
          get(`/export/${kind}/${id}`).buffer(true).parse(textBody),
          get(`/export/${kind}/${result.id_map[map][id]}`, bob.apiKey).buffer(true).parse(textBody),
        ]);
        expect(b.status).toBe(200);
        expect(b.body).toEqual(a.body);
      }
      const entries = await get(
        `/worldbooks/${result.id_map.worldbooks[seed.worldbookId]}/entries`,
        bob.apiKey,
      );
      expect(entries.body.data).toHaveLength(3);
      const card = await get(`/users/${result.id_map.user_cards[seed.cards[0].id]}`, bob.apiKey);
      expect(card.body.data).toMatchObject({
        name: 'Persona One',
        status: 'disabled',
        snapshot: seed.cards[0].snapshot,
      });

      // Tags point at the restored floor and version, and at the restored create_tag logs.
      const tags = (await get('/vc-tags', bob.apiKey)).body.data as Json[];
      const floorTag = tags.find((tag) => tag.name === 'milestone')!;
      const versionTag = tags.find((tag) => tag.name === 'first cut')!;
      expect(floorTag.id).toBe(result.id_map.vc_tags[seed.floorTagId]);
      expect(floorTag).toMatchObject({ session_id: sessionId, metadata: { note: 'x' } });
      const [origFloor, newFloor] = await Promise.all([
        get(`/floors/${seed.taggedFloorId}`),
        get(`/floors/${floorTag.target_id}`, bob.apiKey),
      ]);
      expect(newFloor.status).toBe(200);
      expect(floorTag.target_id).not.toBe(seed.taggedFloorId);
      expect(newFloor.body.data).toMatchObject({
        session_id: sessionId,
        floor_no: origFloor.body.data.floor_no,
      });
      expect(versionTag).toMatchObject({
        target_type: 'asset_version',
        target_asset_kind: 'character',
        target_id: ours.body.data.find((v: Json) => v.version_no === 1).id,
      });

      // Logs: new ids, one new group per original group, no request id, the original kept.
      const after = (await logsOf(bob.accountId)).filter((l) => !before.some((b) => b.id === l.id));
      const restored = after.filter((l) => (l.metadata as Json | null)?.restore);
      expect(restored).toHaveLength(doc.data.operation_logs.length);
      const originals = new Map<string, Json>(doc.data.operation_logs.map((l: Json) => [l._original_id, l]));
      for (const log of restored) {
        const source = (log.metadata as Json).restore.source;
        const original = originals.get(source.id)!;
        expect(original).toBeDefined();
        expect(log.id).not.toBe(source.id);
        expect(log).toMatchObject({ account_id: bob.accountId, request_id: null, action: original.action });
        expect(source.request_id).toBe(original.request_id);
        expect((log.metadata as Json).restore.job_id).toBe(job.job_id);
      }
      expect(new Set(restored.map((l) => (l.metadata as Json).restore.source.id))).toEqual(
        new Set(originals.keys()),
      );
      const batch = restored.filter((l) => l.action === 'batch_update_user_card_status');
      expect(batch).toHaveLength(2);
      expect(batch[0].operation_group_id).toBe(batch[1].operation_group_id);
      expect(batch[0].operation_group_id).not.toBe(
        (batch[0].metadata as Json).restore.source.operation_group_id,
      );
      expect(batch[0].operation_group_id).toMatch(/^opgrp_/);
      expect(batch.map((l) => l.target_id).sort()).toEqual(
        seed.cards.map((c) => result.id_map.user_cards[c.id]).sort(),
      );
      const tagLog = restored.find((l) => l.action === 'create_tag' && l.target_id === floorTag.id)!;
      expect(floorTag.created_by_operation_id).toBe(tagLog.id);
      expect(tagLog).toMatchObject({ session_id: sessionId, floor_id: floorTag.target_id });
      const importLog = restored.find((l) => l.action === 'import_chat' && l.session_id === sessionId)!;
      const row = (await backupRepository.listSessions(db(), bob.accountId)).find((r) => r.id === sessionId)!;
      expect(importLog).toMatchObject({ project_id: row.project_id, workspace_id: row.workspace_id });
      expect(importLog.project_id).toEqual(expect.stringMatching(/^prj_/));
      // The restore itself is logged once.
      expect(after.filter((l) => l.action === 'restore_backup')).toEqual([
        expect.objectContaining({ target_id: job.job_id, source_type: 'job' }),
      ]);
      // Nothing of Alice's changed hands: her ids are nowhere in Bob's rows.
      expect(JSON.stringify(await backupRepository.listSessions(db(), bob.accountId))).not.toContain(
        seed.chatSessionId,
      );
    });

    it('into the same account from an export job: clashing names get " (restored)", unimported logs become null', async () => {
      const { job: exportJob } = await exportBackup({});
      const job = await restore({ export_job_id: exportJob.job_id }, alice.apiKey);
      expect(job.result.renamed.vc_tags).toEqual(
        expect.arrayContaining([
          { from: 'milestone', to: 'milestone (restored)' },
          { from: 'first cut', to: 'first cut (restored)' },
        ]),
      );
      expect(job.result.renamed.user_cards).toEqual(
        expect.arrayContaining([{ from: 'Persona One', to: 'Persona One (restored)' }]),
      );
      const tags = (await get('/vc-tags?limit=200')).body.data as Json[];
      const copy = tags.find((tag) => tag.name === 'milestone (restored)')!;
      expect(copy.id).toBe(job.result.id_map.vc_tags[seed.floorTagId]);
      expect(copy.created_by_operation_id).toBeNull();
      expect(copy.target_id).not.toBe(seed.taggedFloorId);
      const card = await get(`/users/${job.result.id_map.user_cards[seed.cards[0].id]}`);
      expect(card.body.data.name).toBe('Persona One (restored)');
      expect(card.body.data.snapshot).toEqual({ ...seed.cards[0].snapshot, name: 'Persona One (restored)' });
      // Versions whose log was not imported have no creator log.
      const characterId = job.result.id_map.characters[seed.characterId];
      const versions = await backupRepository.listAssetVersions(db(), alice.accountId, 'character', [
        characterId,
      ]);
      expect(versions).toHaveLength(2);
      for (const v of versions) expect(v.created_by_operation_id).toBeNull();

      // A second restore of the same file appends the suffix again.
      const again = await restore({ export_job_id: exportJob.job_id }, alice.apiKey);
      expect(again.result.renamed.vc_tags).toEqual(
        expect.arrayContaining([{ from: 'milestone', to: 'milestone (restored) (restored)' }]),
      );
    });

    it('refuses a malformed document with nothing written', async () => {
      const { doc } = await exportBackup({});
      const before = await holdings(bob);
      const broken = (mutate: (d: Json) => void) => {
        const copy = JSON.parse(JSON.stringify(doc));
        mutate(copy);
        return copy;
      };
      const cases: Array<[Json, number, string, string?]> = [
        [{ document: broken((d) => delete d.spec) }, 400, 'import_parse_error', '$.spec'],
        [{ document: broken((d) => (d.spec_version = '2.0.0')) }, 400, 'import_unsupported_version'],
        [
          { document: broken((d) => (d.data.vc_tags[0].target_id_ref = 'flr_nowhere')) },
          400,
          'import_parse_error',
          '$.data.vc_tags[0].target_id_ref',
        ],
        [
          { document: broken((d) => (d.data.characters[0].latest_version_id_ref = 'x')) },
          400,
          'import_parse_error',
          '$.data.characters[0].latest_version_id_ref',
        ],
        [
          { document: broken((d) => (d.data.sessions[0].chat.data.floors[0].pages[0].page_kind = 'bogus')) },
          400,
          'import_parse_error',
        ],
        [
          { document: broken((d) => (d.data.worldbooks[0].entries[0].uid = 'one')) },
          400,
          'import_parse_error',
          '$.data.worldbooks[0].entries[0].uid',
        ],
        [
          { document: broken((d) => (d.data.characters[0].versions[0].payload.data.name = 'a\u0000b')) },
          400,
          'import_parse_error',
          '$.data.characters[0].versions[0].payload.data.name',
        ],
        // Values the database columns cannot hold: refused here, not by the worker's INSERT.
        [
          { document: broken((d) => (d.data.user_cards[0].revision = 0)) },
          400,
          'import_parse_error',
          '$.data.user_cards[0].revision',
        ],
        [
          { document: broken((d) => (d.data.presets[0].versions[0].version_no = 2 ** 31)) },
          400,
          'import_parse_error',
          '$.data.presets[0].versions[0].version_no',
        ],
        [
          { document: broken((d) => (d.data.worldbooks[0].entries[0].uid = -1)) },
          400,
          'import_parse_error',
          '$.data.worldbooks[0].entries[0].uid',
        ],
        [
          { document: broken((d) => (d.data.vc_tags[0].created_at = 1e19)) },
          400,
          'import_parse_error',
          '$.data.vc_tags[0].created_at',
        ],
        [
          { document: broken((d) => (d.data.sessions[0].archived_at = 1.5)) },
          400,
          'import_parse_error',
          '$.data.sessions[0].archived_at',
        ],
        [
          { document: broken((d) => (d.data.sessions[0].title = 't'.repeat(201))) },
          400,
          'import_parse_error',
          '$.data.sessions[0].title',
        ],
        [
          { document: broken((d) => (d.data.vc_tags[0].metadata = { note: 'x\ud800' })) },
          400,
          'import_parse_error',
          '$.data.vc_tags[0].metadata.note',
        ],
        [{ document: 'not an object' }, 400, 'validation_error'],
        [{}, 400, 'validation_error'],
        [{ document: doc, export_job_id: 'job_x' }, 400, 'validation_error'],
      ];
      for (const [body, status, code, path] of cases) {
        const res = await post('/backup/jobs/restore', body, bob.apiKey);
        expect([res.status, res.body.error?.code]).toEqual([status, code]);
        if (path) expect(res.body.error.details.path).toBe(path);
      }
      expect(await holdings(bob)).toEqual(before);
    });

    it(`the size limit: a document of ${MAX_BYTES} bytes is taken, one byte more is 413 with nothing written`, async () => {
      const { doc } = await exportBackup({});
      const base = JSON.parse(JSON.stringify(doc));
      base.data.user_cards[0].snapshot.padding = '';
      const room = MAX_BYTES - Buffer.byteLength(JSON.stringify(base), 'utf8');
      expect(room).toBeGreaterThan(0);
      base.data.user_cards[0].snapshot.padding = 'x'.repeat(room);
      expect(Buffer.byteLength(JSON.stringify(base), 'utf8')).toBe(MAX_BYTES);
      const carol = await createAccountCaller(t, { name: 'Carol' });
      await restore({ document: base }, carol.apiKey);

      const dave = await createAccountCaller(t, { name: 'Dave' });
      const before = await holdings(dave);
      base.data.user_cards[0].snapshot.padding += 'x';
      const res = await post('/backup/jobs/restore', { document: base }, dave.apiKey);
      expect(res.status).toBe(413);
      expect(res.body.error).toMatchObject({
        code: 'import_payload_too_large',
        details: { byte_count: MAX_BYTES + 1, max_bytes: MAX_BYTES },
      });
      expect(await holdings(dave)).toEqual(before);
    });

    it('no id of the source account reaches the restored rows, even from a document that names it', async () => {
      const { doc } = await exportBackup({ include_operation_logs: 'selected_scope' });
      expect(JSON.stringify(doc)).not.toContain(alice.accountId);
      // A hand-made (or older) document that carries the source account as a log's actor.
      doc.data.operation_logs[0].actor_type = 'account';
      doc.data.operation_logs[0].actor_id = alice.accountId;
      const gina = await createAccountCaller(t, { name: 'Gina' });
      const job = await restore({ document: doc }, gina.apiKey);
      expect(job.result.counts.operation_logs).toBe(doc.data.operation_logs.length);
      const { rows } = await sql<{ table_name: string; column_name: string }>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND column_name IN ('account_id', 'session_id')`.execute(db());
      const sessionIds = (await backupRepository.listSessions(db(), gina.accountId)).map((r) => r.id);
      expect(sessionIds).toHaveLength(doc.data.sessions.length);
      let scanned = 0;
      for (const { table_name: table, column_name: column } of rows) {
        const found = await sql<Json>`SELECT * FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ANY(${
          column === 'account_id' ? [gina.accountId] : sessionIds
        }::text[])`.execute(db());
        scanned += found.rows.length;
        expect([table, JSON.stringify(found.rows).includes(alice.accountId)]).toEqual([table, false]);
      }
      expect(scanned).toBeGreaterThan(doc.data.operation_logs.length);
      const log = (await logsOf(gina.accountId)).find(
        (l) => (l.metadata as Json | null)?.restore?.source.id === doc.data.operation_logs[0]._original_id,
      )!;
      expect(log).toMatchObject({ actor_type: 'account', actor_id: gina.accountId });
      expect((log.metadata as Json).restore.source.actor_id).toBeNull();
    });

    it('export_job_id must name a succeeded export of the account (404 backup_job_not_found / artifact_not_found)', async () => {
      const { job } = await exportBackup({});
      const res = await post('/backup/jobs/restore', { export_job_id: job.job_id }, bob.apiKey);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('backup_job_not_found');
      const restoreJob = await restore({ export_job_id: job.job_id }, alice.apiKey);
      const fromRestore = await post('/backup/jobs/restore', { export_job_id: restoreJob.job_id });
      expect(fromRestore.status).toBe(404);
      expect(fromRestore.body.error.code).toBe('artifact_not_found');
      const client = await createClientCaller(t, alice.accountId, 'Other');
      const denied = await post('/backup/jobs/restore', { export_job_id: job.job_id }, client.apiKey);
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('project_access_denied');
    });
  });

  describe('one transaction', () => {
    it('a restore that fails after writing leaves nothing (every write is in the caller transaction)', async () => {
      const { doc } = await exportBackup({ include_operation_logs: 'selected_scope' });
      const erin = await createAccountCaller(t, { name: 'Erin' });
      const before = await holdings(erin);
      const actor = {
        kind: 'account' as const,
        accountId: erin.accountId,
        accountRole: 'user' as const,
        clientId: erin.clientId,
        clientIsDefault: true,
      };
      let restored: Json | undefined;
      const failure = await inTransaction(db(), async ({ tx }) => {
        restored = await restoreBackupInTransaction(tx, actor, parseAccountBackup(doc), 'job_test', {
          access: t.app.get(ProjectAccess, { strict: false }),
          operationLogs: t.app.get(OperationLogWriter, { strict: false }),
          clientDataLimits: { maxItems: 100_000, maxBytes: 1 << 28 },
        });
        throw new Error('fail after the restore');
      }).catch((error: unknown) => error);
      expect((failure as Error).message).toBe('fail after the restore');
      expect(restored?.counts).toMatchObject({
        sessions: doc.data.sessions.length,
        characters: doc.data.characters.length,
        vc_tags: doc.data.vc_tags.length,
        operation_logs: doc.data.operation_logs.length,
      });
      expect(doc.data.sessions.length).toBeGreaterThan(0);
      expect(await holdings(erin)).toEqual(before);
    });
  });

  describe('export snapshot', () => {
    it('reads every table at one snapshot: a worldbook deleted mid-export is exported whole (entries too), and the file restores', async () => {
      const frank = await createAccountCaller(t, { name: 'Frank' });
      const book = await importWorldbook(t, frank.apiKey, generateWorldbook(2), 'Deleted mid-export');
      const original = backupRepository.listWorldbookEntries.bind(backupRepository);
      let deleted = 0;
      const spy = jest
        .spyOn(backupRepository, 'listWorldbookEntries')
        .mockImplementation(async (executor, accountId, ids) => {
          if (accountId === frank.accountId && deleted === 0) {
            // After the heads were read, before the entries are: another request deletes the book
            // (its entries go with it).
            deleted = (await t.http.delete(`/worldbooks/${book.id}`).set('x-api-key', frank.apiKey)).status;
          }
          return original(executor, accountId, ids);
        });
      try {
        const { doc } = await exportBackup({}, frank.apiKey);
        expect(deleted).toBe(204);
        expect((await get(`/worldbooks/${book.id}`, frank.apiKey)).status).toBe(404);
        expect(doc.data.worldbooks).toEqual([
          expect.objectContaining({
            _original_id: book.id,
            versions: [expect.objectContaining({ version_no: 1 })],
            entries: [expect.anything(), expect.anything()],
          }),
        ]);
        const hana = await createAccountCaller(t, { name: 'Hana' });
        const job = await restore({ document: doc }, hana.apiKey);
        expect(job.result.counts).toMatchObject({ worldbooks: 1, worldbook_entries: 2 });
      } finally {
        spy.mockRestore();
      }
    });
  });

  describe('job routes', () => {
    it('another account, or another Client, gets 404 for the job and its file; a restore job has no file', async () => {
      const { job } = await exportBackup({});
      for (const key of [bob.apiKey, (await createClientCaller(t, alice.accountId, 'Third')).apiKey]) {
        const status = await get(`/backup/jobs/${job.job_id}`, key);
        expect(status.status).toBe(404);
        expect(status.body.error.code).toBe('backup_job_not_found');
        expect(JSON.stringify(status.body)).not.toContain(alice.accountId);
        const file = await get(`/backup/jobs/${job.job_id}/file`, key);
        expect(file.status).toBe(404);
        expect(file.body.error.code).toBe('backup_job_not_found');
      }
      expect((await get('/backup/jobs/job_unknown')).body.error.code).toBe('backup_job_not_found');
      const restoreJob = await restore({ export_job_id: job.job_id }, alice.apiKey);
      const file = await get(`/backup/jobs/${restoreJob.job_id}/file`);
      expect(file.status).toBe(404);
      expect(file.body.error.code).toBe('artifact_not_found');
    });
  });
});

describe('Backup restore from an own export above the size limit', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;
  const LIMIT = 4_000;

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_IMPORT_MAX_BYTES: String(LIMIT) } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  const exportJob = async (): Promise<Json> => {
    const res = await t.http.post('/backup/jobs/export').set('x-api-key', alice.apiKey).send({});
    expect(res.status).toBe(202);
    for (;;) {
      const job = (await t.http.get(`/backup/jobs/${res.body.data.job_id}`).set('x-api-key', alice.apiKey))
        .body.data as Json;
      if (job.status === 'succeeded' || job.status === 'dead_letter') return job;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('413 import_payload_too_large for export_job_id as for a document, nothing written; under it, taken', async () => {
    const small = await exportJob();
    expect(small).toMatchObject({ status: 'succeeded' });
    expect(small.result.byte_count).toBeLessThanOrEqual(LIMIT);
    const taken = await t.http
      .post('/backup/jobs/restore')
      .set('x-api-key', alice.apiKey)
      .send({ export_job_id: small.job_id });
    expect(taken.status).toBe(202);

    await createUserCard(t, alice.apiKey, { name: 'Big', description: 'd'.repeat(LIMIT) });
    const big = await exportJob();
    expect(big.result.byte_count).toBeGreaterThan(LIMIT);
    const jobsBefore = await t.resources.database.db.selectFrom('backup_jobs').select('id').execute();
    const res = await t.http
      .post('/backup/jobs/restore')
      .set('x-api-key', alice.apiKey)
      .send({ export_job_id: big.job_id });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({
      code: 'import_payload_too_large',
      details: { byte_count: big.result.byte_count, max_bytes: LIMIT },
    });
    const jobsAfter = await t.resources.database.db.selectFrom('backup_jobs').select('id').execute();
    expect(jobsAfter).toEqual(jobsBefore);
  });
});

describe('Backup file expiry', () => {
  let t: TestApp;
  let worker: WorkerHandle;
  let alice: Caller;

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_EXPORT_ARTIFACT_TTL_MS: '1' } });
    worker = await startWorker(t.resources, { shutdownGraceMs: 1_000 });
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await deleteQueueKeys(REDIS_URL, t.config.queuePrefix);
  });

  it('410 artifact_expired once output_expires_at has passed, for the download and for a restore from it', async () => {
    const res = await t.http.post('/backup/jobs/export').set('x-api-key', alice.apiKey).send({});
    expect(res.status).toBe(202);
    let job: Json = {};
    for (let i = 0; i < 600; i++) {
      job = (await t.http.get(`/backup/jobs/${res.body.data.job_id}`).set('x-api-key', alice.apiKey)).body
        .data;
      if (job.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(job.status).toBe('succeeded');
    while (Date.now() <= job.output_expires_at) await new Promise((resolve) => setTimeout(resolve, 2));
    const file = await t.http.get(`/backup/jobs/${job.job_id}/file`).set('x-api-key', alice.apiKey);
    expect(file.status).toBe(410);
    expect(file.body.error).toMatchObject({
      code: 'artifact_expired',
      details: { output_expires_at: job.output_expires_at },
    });
    const restore = await t.http
      .post('/backup/jobs/restore')
      .set('x-api-key', alice.apiKey)
      .send({ export_job_id: job.job_id });
    expect(restore.status).toBe(410);
    expect(restore.body.error.code).toBe('artifact_expired');

    // The maintenance purge deletes the expired document; download and restore keep answering 410.
    const purge = worker.app.get(PurgeExpiredFilesUseCase);
    expect(await purge.execute()).toMatchObject({ backup_files: 1 });
    const left = await t.resources.database.db
      .selectFrom('backup_artifacts')
      .select('job_id')
      .where('job_id', '=', job.job_id)
      .execute();
    expect(left).toHaveLength(0);
    const again = await t.http.get(`/backup/jobs/${job.job_id}/file`).set('x-api-key', alice.apiKey);
    expect(again.status).toBe(410);
    expect(again.body.error).toMatchObject({
      code: 'artifact_expired',
      details: { output_expires_at: job.output_expires_at },
    });
    const restoreAgain = await t.http
      .post('/backup/jobs/restore')
      .set('x-api-key', alice.apiKey)
      .send({ export_job_id: job.job_id });
    expect(restoreAgain.status).toBe(410);
  });
});
