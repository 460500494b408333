import {
  ID_PREFIX,
  isPlainObject,
  newId,
  restoredName,
  restoredNameCandidates,
  type BackupAssetVersion,
  type BackupOperationLog,
} from '@hearth/domain';
import type { ProjectAccess, Actor } from '@hearth/permissions';
import {
  backupRepository,
  conversationRepository,
  sessionPromptSettingsRepository,
  type AssetKind,
  type AssetVersionsTable,
  type OperationLogsTable,
  type SessionRow,
  type Tx,
} from '@hearth/persistence';
import type { Insertable } from 'kysely';
import { nchatExtras, writeNchatImport } from '../chat-transfer/chat-import-writer';
import { restoreClientData } from './backup-client-data';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import type { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { createSessionInTransaction } from '../sessions/create-session.use-case';
import { searchText } from '../worldbooks/worldbook-rules';
import type { ParsedAccountBackup } from './backup-rules';

export interface BackupRestoreDeps {
  access: ProjectAccess;
  operationLogs: OperationLogWriter;
  /** The account limits of session state (`CLIENT_DATA_ACCOUNT_MAX_ITEMS` / `_BYTES`). */
  clientDataLimits: { maxItems: number; maxBytes: number };
}

type IdMap = Map<string, string>;

/** What a restore answers (the job's result). */
export interface BackupRestoreResult {
  counts: {
    characters: number;
    character_versions: number;
    presets: number;
    preset_versions: number;
    regex_profiles: number;
    regex_profile_versions: number;
    worldbooks: number;
    worldbook_versions: number;
    worldbook_entries: number;
    user_cards: number;
    sessions: number;
    /** Restored sessions given their prompt settings row. */
    session_prompt_settings: number;
    floors: number;
    vc_tags: number;
    operation_logs: number;
    operation_groups: number;
    /** Namespaces registered by the restore (one the account already had by name is used as it is). */
    client_data_namespaces: number;
    session_state_writes: number;
  };
  /** Names that clashed with the account's and got ` (restored)`. */
  renamed: {
    vc_tags: Array<{ from: string; to: string }>;
    user_cards: Array<{ from: string; to: string }>;
  };
  /** Original id → new id of the head records (floors, versions and logs are counted only). */
  id_map: Record<
    'characters' | 'presets' | 'regex_profiles' | 'worldbooks' | 'user_cards' | 'sessions' | 'vc_tags',
    Record<string, string>
  >;
  warnings: string[];
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const idsOf = <T extends { _original_id: string }>(list: T[], prefix: string): IdMap =>
  new Map(list.map((x) => [x._original_id, newId(prefix)]));

/**
 * Restores a checked backup into the caller's account inside the caller's transaction
 * (docs/decisions.md "Backup"): every record gets a new id and every reference is mapped; each session
 * is created like a chat import (its own new `session_default` Project, the `nchat` writer) and then
 * given the original's status, binding, dates and prompt settings row; tags and user cards whose names
 * the account already uses get ` (restored)`; operation logs get new ids, one new group id per original
 * group, no request id, and the original ids in `metadata.restore.source`; a version's or tag's
 * `created_by_operation_id` is the restored log's new id, or null when that log was not in the backup.
 */
export async function restoreBackupInTransaction(
  tx: Tx,
  actor: Actor,
  parsed: ParsedAccountBackup,
  jobId: string,
  deps: BackupRestoreDeps,
): Promise<BackupRestoreResult> {
  const accountId = actor.accountId;
  const data = parsed.document.data;

  const characterIds = idsOf(data.characters, ID_PREFIX.character);
  const presetIds = idsOf(data.presets, ID_PREFIX.preset);
  const regexIds = idsOf(data.regex_profiles, ID_PREFIX.regexProfile);
  const worldbookIds = idsOf(data.worldbooks, ID_PREFIX.worldbook);
  const userCardIds = idsOf(data.user_cards, ID_PREFIX.userCard);
  const tagIds = idsOf(data.vc_tags, ID_PREFIX.vcTag);
  const logIds = idsOf(data.operation_logs, ID_PREFIX.operationLog);
  const versionIds: IdMap = new Map();
  for (const [list, prefix] of [
    [data.characters, ID_PREFIX.characterVersion],
    [data.presets, ID_PREFIX.presetVersion],
    [data.regex_profiles, ID_PREFIX.regexProfileVersion],
    [data.worldbooks, ID_PREFIX.worldbookVersion],
  ] as const) {
    for (const asset of list) for (const v of asset.versions) versionIds.set(v._original_id, newId(prefix));
  }
  const madeBy = (ref: string | null) => (ref === null ? null : (logIds.get(ref) ?? null));
  // A Client id (a client log's actor, a settings row's writer) is kept only when that Client is the
  // target account's.
  const clientIds = await backupRepository.clientsOfAccount(tx, accountId, [
    ...data.operation_logs
      .filter((l) => l.actor_type === 'client' && l.actor_id !== null)
      .map((l) => l.actor_id!),
    ...parsed.prompt_settings.flatMap((p) => (p?.updated_by ? [p.updated_by] : [])),
  ]);

  // ---- user cards (names unique per account among live cards) ----
  const renamedCards: Array<{ from: string; to: string }> = [];
  const takenCards = await backupRepository.takenUserCardNames(
    tx,
    accountId,
    data.user_cards.flatMap((u) => restoredNameCandidates(u.name)),
  );
  await backupRepository.insertUserCards(
    tx,
    data.user_cards.map((u) => {
      const name = restoredName(u.name, (n) => takenCards.has(n));
      takenCards.add(name);
      if (name !== u.name) renamedCards.push({ from: u.name, to: name });
      return {
        id: userCardIds.get(u._original_id)!,
        account_id: accountId,
        name,
        status: u.status,
        snapshot: JSON.stringify({ ...u.snapshot, name }),
        revision: u.revision,
        deleted_at: null,
        created_at: u.created_at,
        updated_at: u.updated_at,
      };
    }),
  );

  // ---- library assets and their versions ----
  const versionRows: Array<Insertable<AssetVersionsTable> & { file_body: string | null }> = [];
  const addVersions = (kind: AssetKind, assetId: string, versions: BackupAssetVersion[]) => {
    for (const v of versions) {
      versionRows.push({
        id: versionIds.get(v._original_id)!,
        account_id: accountId,
        asset_kind: kind,
        asset_id: assetId,
        version_no: v.version_no,
        name: v.name,
        payload: JSON.stringify(v.payload),
        source_format: v.source_format,
        change_kind: v.change_kind,
        created_by_operation_id: madeBy(v.created_by_operation_id_ref),
        created_at: v.created_at,
        file_body: v.file,
      });
    }
  };
  await backupRepository.insertCharacters(
    tx,
    data.characters.map((c) => {
      const id = characterIds.get(c._original_id)!;
      addVersions('character', id, c.versions);
      return {
        id,
        account_id: accountId,
        name: c.name,
        source: c.source,
        source_format: c.source_format,
        latest_version_id: versionIds.get(c.latest_version_id_ref)!,
        version_no: c.version_no,
        deleted_at: null,
        created_at: c.created_at,
        updated_at: c.updated_at,
      };
    }),
  );
  await backupRepository.insertPresets(
    tx,
    data.presets.map((p) => {
      const id = presetIds.get(p._original_id)!;
      addVersions('preset', id, p.versions);
      return {
        id,
        account_id: accountId,
        name: p.name,
        source: p.source,
        latest_version_id: versionIds.get(p.latest_version_id_ref)!,
        version_no: p.version_no,
        deleted_at: null,
        created_at: p.created_at,
        updated_at: p.updated_at,
      };
    }),
  );
  await backupRepository.insertRegexProfiles(
    tx,
    data.regex_profiles.map((r) => {
      const id = regexIds.get(r._original_id)!;
      addVersions('regex_profile', id, r.versions);
      return {
        id,
        account_id: accountId,
        name: r.name,
        source: r.source,
        latest_version_id: versionIds.get(r.latest_version_id_ref)!,
        version_no: r.version_no,
        script_count: r.script_count,
        compat_report: JSON.stringify(r.compat_report),
        deleted_at: null,
        created_at: r.created_at,
        updated_at: r.updated_at,
      };
    }),
  );
  let entryCount = 0;
  await backupRepository.insertWorldbooks(
    tx,
    data.worldbooks.map((w) => {
      const id = worldbookIds.get(w._original_id)!;
      addVersions('worldbook', id, w.versions);
      return {
        id,
        account_id: accountId,
        name: w.name,
        source: 'ext_frontend' as const,
        version: w.version,
        extra: JSON.stringify(w.extra),
        snapshot_version: w.snapshot_version,
        delta_entry_count: w.delta_entry_count,
        created_at: w.created_at,
        updated_at: w.updated_at,
      };
    }),
  );
  await backupRepository.insertWorldbookEntries(
    tx,
    data.worldbooks.flatMap((w) =>
      w.entries.map(({ _original_id: _id, ...e }) => {
        entryCount++;
        return {
          ...e,
          id: newId(ID_PREFIX.worldbookEntry),
          worldbook_id: worldbookIds.get(w._original_id)!,
          account_id: accountId,
          keys: JSON.stringify(e.keys),
          keys_secondary: JSON.stringify(e.keys_secondary),
          raw: JSON.stringify(e.raw),
          search_text: searchText(e),
        };
      }),
    ),
  );
  await backupRepository.insertAssetVersions(tx, versionRows);

  // ---- sessions, each as a chat import into its own new session_default Project ----
  const sessionIds: IdMap = new Map();
  const newSessions = new Map<string, SessionRow>();
  const floorIds: IdMap = new Map();
  const branchIds: IdMap = new Map();
  /** Original floor id → original session id. */
  const floorSessions: IdMap = new Map();
  let settingsCount = 0;
  for (const [i, s] of data.sessions.entries()) {
    const characterId = s.character_id_ref === null ? null : characterIds.get(s.character_id_ref)!;
    const characterVersionId =
      s.character_version_id_ref === null ? null : versionIds.get(s.character_version_id_ref)!;
    const session = await createSessionInTransaction(
      tx,
      actor,
      {
        title: s.title,
        character_id: characterId,
        character_version_id: characterVersionId,
        user_card_id: s.user_card_id_ref === null ? null : userCardIds.get(s.user_card_id_ref)!,
        preset_id: s.preset_id_ref === null ? null : presetIds.get(s.preset_id_ref)!,
        worldbook_ids: s.worldbook_id_refs.map((id) => worldbookIds.get(id)!),
        regex_profile_id: s.regex_profile_id_ref === null ? null : regexIds.get(s.regex_profile_id_ref)!,
        greeting: false,
      },
      deps,
    );
    const main = await conversationRepository.findBranchByName(tx, session.id, MAIN_BRANCH);
    if (!main) throw new Error(`session ${session.id} has no main branch`);
    const written = await writeNchatImport(
      tx,
      session,
      main,
      parsed.chats[i],
      nchatExtras(JSON.stringify(s.chat)),
    );
    // The original's status, dates and binding (a character without a version follows its latest).
    await backupRepository.restoreSessionState(tx, session.id, {
      status: s.status,
      archived_at: s.archived_at,
      character_id: characterId,
      character_version_id: characterVersionId,
      created_at: s.created_at,
      updated_at: s.updated_at,
    });
    const settings = parsed.prompt_settings[i];
    if (settings) {
      // The row as written (checked by the settings route's rules in parseAccountBackup); no
      // update_prompt_settings log: the restore is the logged event.
      const v = settings.settings;
      await sessionPromptSettingsRepository.insert(tx, {
        session_id: session.id,
        account_id: accountId,
        prompt_mode: v.prompt_mode,
        macro_engine: v.macro_engine,
        post_processing: v.post_processing,
        timezone: v.timezone,
        persona_position: v.persona_position,
        persona_depth: v.persona_depth,
        persona_role: v.persona_role,
        lorebook_settings: JSON.stringify(v.lorebook),
        authors_note: JSON.stringify(v.authors_note),
        version: settings.version,
        updated_at: settings.updated_at,
        updated_by:
          settings.updated_by !== null && clientIds.has(settings.updated_by) ? settings.updated_by : null,
      });
      settingsCount++;
    }
    sessionIds.set(s._original_id, session.id);
    newSessions.set(s._original_id, session);
    for (const [from, to] of written.floorIds) {
      floorIds.set(from, to);
      floorSessions.set(from, s._original_id);
    }
    for (const [from, to] of written.branchIds) branchIds.set(from, to);
  }

  // ---- client data: namespaces by name, then the sessions' writes on their restored floors ----
  const clientData = await restoreClientData(
    tx,
    actor,
    data,
    { sessionIds, floorIds },
    deps.clientDataLimits,
  );

  // ---- tags (names unique per account) ----
  const renamedTags: Array<{ from: string; to: string }> = [];
  const takenTags = await backupRepository.takenTagNames(
    tx,
    accountId,
    data.vc_tags.flatMap((t) => restoredNameCandidates(t.name)),
  );
  await backupRepository.insertVcTags(
    tx,
    data.vc_tags.map((t) => {
      const name = restoredName(t.name, (n) => takenTags.has(n));
      takenTags.add(name);
      if (name !== t.name) renamedTags.push({ from: t.name, to: name });
      const floorTarget = t.target_type === 'floor';
      // A floor's tag takes the floor's session (whatever the file said), as tag creation does.
      const sessionRef = floorTarget ? floorSessions.get(t.target_id_ref)! : t.session_id_ref;
      return {
        id: tagIds.get(t._original_id)!,
        account_id: accountId,
        name,
        target_type: t.target_type,
        target_id: (floorTarget ? floorIds : versionIds).get(t.target_id_ref)!,
        target_asset_kind: floorTarget ? null : t.target_asset_kind,
        session_id: sessionRef === null ? null : sessionIds.get(sessionRef)!,
        metadata: json(t.metadata),
        created_by_operation_id: madeBy(t.created_by_operation_id_ref),
        created_at: t.created_at,
      };
    }),
  );

  // ---- operation logs ----
  const groupIds: IdMap = new Map();
  for (const log of data.operation_logs) {
    if (log.operation_group_id !== null && !groupIds.has(log.operation_group_id)) {
      groupIds.set(log.operation_group_id, newId(ID_PREFIX.operationGroup));
    }
  }
  const targetMaps = [
    sessionIds,
    floorIds,
    branchIds,
    characterIds,
    presetIds,
    regexIds,
    worldbookIds,
    versionIds,
    userCardIds,
    tagIds,
    logIds,
  ];
  const mapTarget = (id: string | null) => {
    if (id === null) return null;
    for (const map of targetMaps) if (map.has(id)) return map.get(id)!;
    return null;
  };
  const logRows = data.operation_logs.map((log): Insertable<OperationLogsTable> => {
    const session = log.session_id === null ? undefined : newSessions.get(log.session_id);
    return {
      id: logIds.get(log._original_id)!,
      account_id: accountId,
      actor_type: log.actor_type,
      actor_id:
        log.actor_type === 'account'
          ? accountId
          : log.actor_id !== null && clientIds.has(log.actor_id)
            ? log.actor_id
            : null,
      actor_account_id: accountId,
      operation_group_id: log.operation_group_id === null ? null : groupIds.get(log.operation_group_id)!,
      request_id: null,
      workspace_id: session?.workspace_id ?? null,
      project_id: session?.project_id ?? null,
      source_type: log.source_type,
      action: log.action,
      status: log.status,
      session_id: session?.id ?? null,
      branch_id: log.branch_id === null ? null : (branchIds.get(log.branch_id) ?? null),
      floor_id: log.floor_id === null ? null : (floorIds.get(log.floor_id) ?? null),
      run_id: null,
      target_type: log.target_type,
      target_id: mapTarget(log.target_id),
      before_ref: json(log.before_ref),
      after_ref: json(log.after_ref),
      diff: json(log.diff),
      metadata: JSON.stringify(restoredLogMetadata(log, jobId)),
      created_at: log.created_at,
    };
  });
  await backupRepository.insertOperationLogs(tx, logRows);

  const record = (map: IdMap) => Object.fromEntries(map);
  const versionCount = (list: Array<{ versions: unknown[] }>) =>
    list.reduce((sum, asset) => sum + asset.versions.length, 0);
  return {
    counts: {
      characters: data.characters.length,
      character_versions: versionCount(data.characters),
      presets: data.presets.length,
      preset_versions: versionCount(data.presets),
      regex_profiles: data.regex_profiles.length,
      regex_profile_versions: versionCount(data.regex_profiles),
      worldbooks: data.worldbooks.length,
      worldbook_versions: versionCount(data.worldbooks),
      worldbook_entries: entryCount,
      user_cards: data.user_cards.length,
      sessions: data.sessions.length,
      session_prompt_settings: settingsCount,
      floors: floorIds.size,
      vc_tags: data.vc_tags.length,
      operation_logs: data.operation_logs.length,
      operation_groups: groupIds.size,
      client_data_namespaces: clientData.client_data_namespaces,
      session_state_writes: clientData.session_state_writes,
    },
    renamed: { vc_tags: renamedTags, user_cards: renamedCards },
    id_map: {
      characters: record(characterIds),
      presets: record(presetIds),
      regex_profiles: record(regexIds),
      worldbooks: record(worldbookIds),
      user_cards: record(userCardIds),
      sessions: record(sessionIds),
      vc_tags: record(tagIds),
    },
    warnings: [
      ...parsed.warnings,
      ...clientData.reused_namespaces.map(
        (name) =>
          `client data namespace ${name} already existed: its writes were restored into it, its settings kept`,
      ),
    ],
  };
}

/**
 * A restored log's metadata: the original's keys, plus `restore: {job_id, source}` where `source` holds
 * the original's ids that the restore replaced or cleared (an earlier restore's `restore` is kept
 * inside `source.restore`).
 */
function restoredLogMetadata(log: BackupOperationLog, jobId: string): Record<string, unknown> {
  const original = isPlainObject(log.metadata)
    ? log.metadata
    : log.metadata === null
      ? {}
      : { value: log.metadata };
  const { restore: earlier, ...rest } = original;
  return {
    ...rest,
    restore: {
      job_id: jobId,
      source: {
        id: log._original_id,
        operation_group_id: log.operation_group_id,
        request_id: log.request_id,
        actor_type: log.actor_type,
        // An account actor's id would be the source account's: never carried (Hearth's exports leave it
        // out already; a hand-made document may not).
        actor_id: log.actor_type === 'account' ? null : log.actor_id,
        workspace_id: log.workspace_id,
        project_id: log.project_id,
        session_id: log.session_id,
        branch_id: log.branch_id,
        floor_id: log.floor_id,
        run_id: log.run_id,
        target_id: log.target_id,
        ...(earlier === undefined ? {} : { restore: earlier }),
      },
    },
  };
}
