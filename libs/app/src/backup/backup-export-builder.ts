import {
  BACKUP_SPEC,
  BACKUP_SPEC_VERSION,
  type BackupAssetVersion,
  type BackupClientDataNamespace,
  type BackupDocument,
  type BackupOperationLog,
  type BackupSession,
  type BackupVcTag,
  type JsonObject,
} from '@hearth/domain';
import {
  backupRepository,
  clientDataRepository,
  type AssetKind,
  type BackupAssetVersionRow,
  type Executor,
  type OperationLogRow,
} from '@hearth/persistence';
import { buildChatExport } from '../chat-transfer/chat-export-builder';
import { EXPORT_APP_VERSION } from '../chat-transfer/chat-transfer-rules';
import { exportedPromptSettings } from './backup-prompt-settings';
import type { BackupExportOptions } from './backup-rules';

/** What an export records in its job result and operation log. */
export interface BackupCounts {
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
  /** Sessions exported with their prompt settings row. */
  session_prompt_settings: number;
  floors: number;
  vc_tags: number;
  operation_logs: number;
  client_data_namespaces: number;
  session_state_writes: number;
}

export interface BuiltBackup {
  content: string;
  counts: BackupCounts;
  byte_count: number;
}

/** Versions of some assets, grouped by asset, as backup records. */
async function versionsByAsset(
  db: Executor,
  accountId: string,
  kind: AssetKind,
  assetIds: string[],
): Promise<Map<string, BackupAssetVersion[]>> {
  const rows = await backupRepository.listAssetVersions(db, accountId, kind, assetIds);
  const out = new Map<string, BackupAssetVersion[]>();
  for (const row of rows) {
    const list = out.get(row.asset_id) ?? [];
    list.push(versionRecord(row));
    out.set(row.asset_id, list);
  }
  return out;
}

function versionRecord(row: BackupAssetVersionRow): BackupAssetVersion {
  return {
    _original_id: row.id,
    version_no: row.version_no,
    name: row.name,
    payload: row.payload,
    file: row.file_body,
    source_format: row.source_format,
    change_kind: row.change_kind,
    created_by_operation_id_ref: row.created_by_operation_id,
    created_at: row.created_at,
  };
}

function logRecord(row: OperationLogRow): BackupOperationLog {
  return {
    _original_id: row.id,
    actor_type: row.actor_type,
    // An account actor's id is the account's own: not carried (the restore puts the new account there).
    actor_id: row.actor_type === 'account' ? null : row.actor_id,
    operation_group_id: row.operation_group_id,
    request_id: row.request_id,
    workspace_id: row.workspace_id,
    project_id: row.project_id,
    source_type: row.source_type,
    action: row.action,
    status: row.status,
    session_id: row.session_id,
    branch_id: row.branch_id,
    floor_id: row.floor_id,
    run_id: row.run_id,
    target_type: row.target_type,
    target_id: row.target_id,
    before_ref: row.before_ref,
    after_ref: row.after_ref,
    diff: row.diff,
    metadata: row.metadata,
    created_at: row.created_at,
  };
}

/**
 * Builds the backup document of an account (docs/decisions.md "Backup"): its live characters, presets,
 * regex profiles (each with every version and the kept JSON text), worldbooks (entries and versions),
 * live user cards, standard sessions (each as its lossless `nchat` file with variables and memories,
 * plus its bindings as refs and its prompt settings row), the tags whose targets are exported
 * (`include_vc_tags`), and the logs `include_operation_logs` selects: `referenced` = the logs that made
 * exported versions and tags
 * (`created_by_operation_id`); `selected_scope` = those plus every log whose session, floor or target is
 * an exported session, floor, asset, version, user card or tag.
 */
export async function buildBackupDocument(
  db: Executor,
  accountId: string,
  options: BackupExportOptions,
): Promise<BuiltBackup> {
  const [
    characterRows,
    presetRows,
    regexRows,
    worldbookRows,
    userCardRows,
    sessionRows,
    settingsRows,
    namespaceRows,
    stateWriteRows,
  ] = await Promise.all([
    backupRepository.listCharacters(db, accountId),
    backupRepository.listPresets(db, accountId),
    backupRepository.listRegexProfiles(db, accountId),
    backupRepository.listWorldbooks(db, accountId),
    backupRepository.listUserCards(db, accountId),
    backupRepository.listSessions(db, accountId),
    backupRepository.listSessionPromptSettings(db, accountId),
    clientDataRepository.listNamespaces(db, accountId),
    clientDataRepository.writesOfAccount(db, accountId),
  ]);
  const clientDataNamespaces = namespaceRows.map((n): BackupClientDataNamespace => ({
    _original_id: n.id,
    name: n.name,
    description: n.description,
    replay_policy: n.replay_policy,
    max_items: n.max_items,
    max_bytes: n.max_bytes,
    created_at: n.created_at,
    updated_at: n.updated_at,
  }));
  const stateWritesOf = new Map<string, BackupSession['session_state_writes'] & object>();
  for (const w of stateWriteRows) {
    const list = stateWritesOf.get(w.session_id) ?? [];
    list.push({
      _original_id: w.id,
      namespace_id_ref: w.namespace_id,
      floor_id_ref: w.floor_id,
      seq: w.seq,
      slot: w.slot,
      present: w.present,
      value: w.present ? w.value : null,
      created_at: w.created_at,
    });
    stateWritesOf.set(w.session_id, list);
  }
  const settingsOf = new Map(settingsRows.map((row) => [row.session_id, row]));
  const ids = <T extends { id: string }>(rows: T[]) => rows.map((row) => row.id);
  const [characterVersions, presetVersions, regexVersions, worldbookVersions, entryRows] = await Promise.all([
    versionsByAsset(db, accountId, 'character', ids(characterRows)),
    versionsByAsset(db, accountId, 'preset', ids(presetRows)),
    versionsByAsset(db, accountId, 'regex_profile', ids(regexRows)),
    versionsByAsset(db, accountId, 'worldbook', ids(worldbookRows)),
    backupRepository.listWorldbookEntries(db, accountId, ids(worldbookRows)),
  ]);

  const characters = characterRows.map((c) => ({
    _original_id: c.id,
    name: c.name,
    source: c.source,
    source_format: c.source_format,
    latest_version_id_ref: c.latest_version_id,
    version_no: c.version_no,
    created_at: c.created_at,
    updated_at: c.updated_at,
    versions: characterVersions.get(c.id) ?? [],
  }));
  const presets = presetRows.map((p) => ({
    _original_id: p.id,
    name: p.name,
    source: p.source,
    latest_version_id_ref: p.latest_version_id,
    version_no: p.version_no,
    created_at: p.created_at,
    updated_at: p.updated_at,
    versions: presetVersions.get(p.id) ?? [],
  }));
  const regexProfiles = regexRows.map((r) => ({
    _original_id: r.id,
    name: r.name,
    source: r.source,
    latest_version_id_ref: r.latest_version_id,
    version_no: r.version_no,
    script_count: r.script_count,
    compat_report: r.compat_report as JsonObject,
    created_at: r.created_at,
    updated_at: r.updated_at,
    versions: regexVersions.get(r.id) ?? [],
  }));
  const worldbooks = worldbookRows.map((w) => ({
    _original_id: w.id,
    name: w.name,
    source: w.source,
    version: w.version,
    extra: w.extra as JsonObject,
    snapshot_version: w.snapshot_version,
    delta_entry_count: w.delta_entry_count,
    created_at: w.created_at,
    updated_at: w.updated_at,
    entries: entryRows
      .filter((e) => e.worldbook_id === w.id)
      .map(({ id, worldbook_id: _b, account_id: _a, search_text: _s, ...e }) => ({
        _original_id: id,
        ...e,
        keys: e.keys as string[],
        keys_secondary: e.keys_secondary as string[],
        raw: e.raw as JsonObject,
      })),
    versions: worldbookVersions.get(w.id) ?? [],
  }));
  const userCards = userCardRows.map((u) => ({
    _original_id: u.id,
    name: u.name,
    status: u.status as 'active' | 'disabled',
    snapshot: u.snapshot as JsonObject,
    revision: u.revision,
    created_at: u.created_at,
    updated_at: u.updated_at,
  }));

  const exported = <T extends { _original_id: string }>(list: T[]) =>
    new Set(list.map((x) => x._original_id));
  const characterIds = exported(characters);
  const userCardIds = exported(userCards);
  const presetIds = exported(presets);
  const regexIds = exported(regexProfiles);
  const worldbookIds = exported(worldbooks);
  const versionIds = new Set(
    [...characters, ...presets, ...regexProfiles, ...worldbooks].flatMap((a) =>
      a.versions.map((v) => v._original_id),
    ),
  );
  const keep = (id: string | null, set: Set<string>) => (id !== null && set.has(id) ? id : null);

  const floorIds = new Set<string>();
  const sessions: BackupSession[] = [];
  for (const session of sessionRows) {
    const built = await buildChatExport(db, session, {
      format: 'nchat',
      include_variables: true,
      include_memories: true,
    });
    const chat = JSON.parse(built.file.content) as JsonObject;
    const data = chat.data as JsonObject;
    // The binding travels as the session's refs; the file's copy would carry this account's ids.
    delete data.character_binding;
    const ownFloors = new Set((data.floors as Array<{ _original_id: string }>).map((f) => f._original_id));
    for (const id of ownFloors) floorIds.add(id);
    const characterRef = keep(session.character_id, characterIds);
    const settings = settingsOf.get(session.id);
    sessions.push({
      _original_id: session.id,
      title: session.title,
      status: session.status,
      archived_at: session.archived_at,
      character_id_ref: characterRef,
      character_version_id_ref: characterRef === null ? null : keep(session.character_version_id, versionIds),
      user_card_id_ref: keep(session.user_card_id, userCardIds),
      preset_id_ref: keep(session.preset_id, presetIds),
      worldbook_id_refs: (session.worldbook_ids as string[]).filter((id) => worldbookIds.has(id)),
      regex_profile_id_ref: keep(session.regex_profile_id, regexIds),
      created_at: session.created_at,
      updated_at: session.updated_at,
      chat,
      prompt_settings: settings ? exportedPromptSettings(settings, accountId) : null,
      // Writes on floors the chat file carries (every committed floor; a restore maps them by floor).
      session_state_writes: (stateWritesOf.get(session.id) ?? []).filter((w) =>
        ownFloors.has(w.floor_id_ref),
      ),
    });
  }
  const sessionIds = exported(sessions);

  const vcTags: BackupVcTag[] = options.include_vc_tags
    ? (await backupRepository.listVcTags(db, accountId))
        .filter((tag) => (tag.target_type === 'floor' ? floorIds : versionIds).has(tag.target_id))
        .map((tag) => ({
          _original_id: tag.id,
          name: tag.name,
          target_type: tag.target_type,
          target_id_ref: tag.target_id,
          target_asset_kind: tag.target_asset_kind,
          session_id_ref: keep(tag.session_id, sessionIds),
          metadata: tag.metadata,
          created_by_operation_id_ref: tag.created_by_operation_id,
          created_at: tag.created_at,
        }))
    : [];

  const referenced = [
    ...[...characters, ...presets, ...regexProfiles, ...worldbooks].flatMap((a) =>
      a.versions.map((v) => v.created_by_operation_id_ref),
    ),
    ...vcTags.map((tag) => tag.created_by_operation_id_ref),
  ].filter((id): id is string => id !== null);
  let logRows: OperationLogRow[] = [];
  if (options.include_operation_logs === 'referenced') {
    logRows = await backupRepository.listLogsByIds(db, accountId, [...new Set(referenced)]);
  } else if (options.include_operation_logs === 'selected_scope') {
    logRows = await backupRepository.listLogsOfScope(db, accountId, {
      sessionIds: [...sessionIds],
      floorIds: [...floorIds],
      targetIds: [
        ...sessionIds,
        ...characterIds,
        ...presetIds,
        ...regexIds,
        ...worldbookIds,
        ...userCardIds,
        ...versionIds,
        ...vcTags.map((tag) => tag._original_id),
      ],
      ids: [...new Set(referenced)],
    });
  }
  const operationLogs = logRows.map(logRecord);

  const document: BackupDocument = {
    spec: BACKUP_SPEC,
    spec_version: BACKUP_SPEC_VERSION,
    exported_at: Date.now(),
    export_app_version: EXPORT_APP_VERSION,
    options: { ...options },
    data: {
      characters,
      presets,
      regex_profiles: regexProfiles,
      worldbooks,
      user_cards: userCards,
      sessions,
      vc_tags: vcTags,
      operation_logs: operationLogs,
      client_data_namespaces: clientDataNamespaces,
    },
  };
  const content = JSON.stringify(document);
  const versionCount = (list: Array<{ versions: unknown[] }>) =>
    list.reduce((sum, asset) => sum + asset.versions.length, 0);
  return {
    content,
    byte_count: Buffer.byteLength(content, 'utf8'),
    counts: {
      characters: characters.length,
      character_versions: versionCount(characters),
      presets: presets.length,
      preset_versions: versionCount(presets),
      regex_profiles: regexProfiles.length,
      regex_profile_versions: versionCount(regexProfiles),
      worldbooks: worldbooks.length,
      worldbook_versions: versionCount(worldbooks),
      worldbook_entries: entryRows.length,
      user_cards: userCards.length,
      sessions: sessions.length,
      session_prompt_settings: sessions.filter((s) => s.prompt_settings).length,
      floors: floorIds.size,
      vc_tags: vcTags.length,
      operation_logs: operationLogs.length,
      client_data_namespaces: clientDataNamespaces.length,
      session_state_writes: sessions.reduce((sum, s) => sum + (s.session_state_writes?.length ?? 0), 0),
    },
  };
}
