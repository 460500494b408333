import { DomainError } from '../errors';
import { importParseError, isPlainObject, type JsonObject } from '../formats/format.rules';
import { parseNchat } from '../formats/nchat-parse';
import type { ParsedNchat } from '../formats/nchat';
import type { NormalizedWorldbookEntry } from '../formats/worldbook';
import { firstBadStringPath, isUnstorableText } from '../text/storable-text';
import { jsonNestedDeeperThan } from '../text/json-depth';
import {
  CLIENT_DATA_LIMITS,
  PUBLIC_NAMESPACES,
  REPLAY_POLICIES,
  type ReplayPolicy,
} from '../client-data/session-state.rules';

/**
 * The account backup document (spec 3 "Backup"; docs/decisions.md "Backup"): one JSON object,
 * `spec: 'hearth_backup'`, whose records carry the source's ids as `_original_id` and every reference
 * as `*_ref`, so a restore can give everything new ids and map each reference. Pure code: the shape
 * check of a restore and the naming rule of clashing names.
 */

export const BACKUP_SPEC = 'hearth_backup';
export const BACKUP_SPEC_VERSION = '1.0.0';

export const BACKUP_LOG_MODES = ['none', 'referenced', 'selected_scope'] as const;
export type BackupLogMode = (typeof BACKUP_LOG_MODES)[number];

/** Appended to a restored tag's or user card's name that the account already uses. */
export const RESTORED_NAME_SUFFIX = ' (restored)';
/** Tag and user card names are 1-200 characters. */
export const RESTORED_NAME_MAX = 200;
/** A session title is 1-200 characters, as `POST /sessions` takes it. */
export const BACKUP_SESSION_TITLE_MAX = 200;
/** The largest value of the `integer` columns a restore writes (version numbers, revisions, uids, ...). */
const INT4_MAX = 2_147_483_647;

export const BACKUP_ASSET_KINDS = ['character', 'preset', 'worldbook', 'regex_profile'] as const;
export type BackupAssetKind = (typeof BACKUP_ASSET_KINDS)[number];

export interface BackupAssetVersion {
  _original_id: string;
  version_no: number;
  name: string;
  payload: unknown;
  /** The version's JSON text as received (presets and regex profiles keep key order with it). */
  file: string | null;
  source_format: string | null;
  change_kind: string;
  created_by_operation_id_ref: string | null;
  created_at: number;
}

interface BackupAssetHead {
  _original_id: string;
  name: string;
  source: string;
  created_at: number;
  updated_at: number;
  versions: BackupAssetVersion[];
}

export interface BackupCharacter extends BackupAssetHead {
  source_format: string;
  latest_version_id_ref: string;
  version_no: number;
}

export interface BackupPreset extends BackupAssetHead {
  latest_version_id_ref: string;
  version_no: number;
}

export interface BackupRegexProfile extends BackupPreset {
  script_count: number;
  compat_report: JsonObject;
}

/** A worldbook entry's columns (spec 3 "Worldbook entry (normalised)", with `raw`) and its times. */
export interface BackupWorldbookEntry extends NormalizedWorldbookEntry {
  _original_id: string;
  created_at: number;
  updated_at: number;
}

export interface BackupWorldbook extends BackupAssetHead {
  version: number;
  extra: JsonObject;
  snapshot_version: number;
  delta_entry_count: number;
  entries: BackupWorldbookEntry[];
}

export interface BackupUserCard {
  _original_id: string;
  name: string;
  status: 'active' | 'disabled';
  snapshot: JsonObject;
  revision: number;
  created_at: number;
  updated_at: number;
}

/**
 * The setting values of a session's prompt settings row, by column (`session_prompt_settings`): the
 * nullable columns, then the written keys of the two objects. A restore checks them with the settings
 * route's own rules (libs/app/src/backup/backup-prompt-settings.ts), not here.
 */
export const BACKUP_PROMPT_SETTING_COLUMNS = [
  'prompt_mode',
  'macro_engine',
  'post_processing',
  'timezone',
  'persona_position',
  'persona_depth',
  'persona_role',
  'lorebook_settings',
  'authors_note',
] as const;
export type BackupPromptSettingColumn = (typeof BACKUP_PROMPT_SETTING_COLUMNS)[number];

/**
 * A session's prompt settings row as written (docs/decisions.md "Backup"), without its account and
 * session; `updated_by` is a Client id, or null (an account's own id is not carried). The setting values
 * are as the document gives them until the restore's app-level check (an absent one is null: not set).
 */
export type BackupPromptSettings = Record<BackupPromptSettingColumn, unknown> & {
  version: number;
  updated_at: number;
  updated_by: string | null;
};

export interface BackupSession {
  _original_id: string;
  title: string;
  status: 'active' | 'archived';
  archived_at: number | null;
  character_id_ref: string | null;
  character_version_id_ref: string | null;
  user_card_id_ref: string | null;
  preset_id_ref: string | null;
  worldbook_id_refs: string[];
  regex_profile_id_ref: string | null;
  created_at: number;
  updated_at: number;
  /** The session's lossless `nchat` file (spec 3 "Chat file formats"), variables and memories included. */
  chat: JsonObject;
  /** Its prompt settings row; null (or absent: documents before this field) when it has none. */
  prompt_settings?: BackupPromptSettings | null;
  /** Its session state writes, on its floors (absent in documents before this field: none). */
  session_state_writes?: BackupSessionStateWrite[];
}

/** A registered client data namespace (docs/decisions.md "Client data and session state"). */
export interface BackupClientDataNamespace {
  _original_id: string;
  name: string;
  description: string | null;
  replay_policy: ReplayPolicy;
  max_items: number;
  max_bytes: number;
  created_at: number;
  updated_at: number;
}

/** A session state write a turn landed on one of the session's floors. */
export interface BackupSessionStateWrite {
  _original_id: string;
  namespace_id_ref: string;
  floor_id_ref: string;
  seq: number;
  slot: string;
  present: boolean;
  /** Any JSON when present; null for a delete. */
  value: unknown;
  created_at: number;
}

export interface BackupVcTag {
  _original_id: string;
  name: string;
  target_type: 'floor' | 'asset_version';
  target_id_ref: string;
  target_asset_kind: BackupAssetKind | null;
  session_id_ref: string | null;
  metadata: unknown;
  created_by_operation_id_ref: string | null;
  created_at: number;
}

/** An operation log as the source stored it, without its account (ids are the source's). */
export interface BackupOperationLog {
  _original_id: string;
  actor_type: string | null;
  /** The Client's id for a `client` actor; null for an `account` actor (the account is not carried). */
  actor_id: string | null;
  operation_group_id: string | null;
  request_id: string | null;
  workspace_id: string | null;
  project_id: string | null;
  source_type: string | null;
  action: string;
  status: 'succeeded' | 'failed' | 'denied' | 'cancelled';
  session_id: string | null;
  branch_id: string | null;
  floor_id: string | null;
  run_id: string | null;
  target_type: string | null;
  target_id: string | null;
  before_ref: unknown;
  after_ref: unknown;
  diff: unknown;
  metadata: unknown;
  created_at: number;
}

export interface BackupData {
  characters: BackupCharacter[];
  presets: BackupPreset[];
  regex_profiles: BackupRegexProfile[];
  worldbooks: BackupWorldbook[];
  user_cards: BackupUserCard[];
  sessions: BackupSession[];
  vc_tags: BackupVcTag[];
  operation_logs: BackupOperationLog[];
  /** The account's client data namespaces (absent in documents before this field: none). */
  client_data_namespaces?: BackupClientDataNamespace[];
}

export interface BackupDocument {
  spec: typeof BACKUP_SPEC;
  spec_version: string;
  exported_at: number;
  export_app_version: string;
  options: { include_operation_logs: BackupLogMode; include_vc_tags: boolean };
  data: BackupData;
}

/** A checked document, with each session's chat parsed (the restore writes it like an nchat import). */
export interface ParsedBackup {
  document: BackupDocument;
  chats: ParsedNchat[];
  warnings: string[];
}

// ---- shape checks (400 import_parse_error with details.path) ----

function fail(path: string, what: string): never {
  throw importParseError(`${path} ${what}`, { path });
}

function obj(value: unknown, path: string): JsonObject {
  if (!isPlainObject(value)) fail(path, 'must be an object');
  return value;
}

function arr(o: JsonObject, key: string, path: string): unknown[] {
  const value = o[key];
  if (!Array.isArray(value)) fail(`${path}.${key}`, 'must be an array');
  return value;
}

function str(o: JsonObject, key: string, path: string, nonEmpty = false): string {
  const value = o[key];
  if (typeof value !== 'string' || (nonEmpty && value.length === 0)) {
    fail(`${path}.${key}`, nonEmpty ? 'must be a non-empty string' : 'must be a string');
  }
  return value;
}

function nstr(o: JsonObject, key: string, path: string): string | null {
  const value = o[key];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') fail(`${path}.${key}`, 'must be a string or null');
  return value;
}

function num(o: JsonObject, key: string, path: string, integer = false): number {
  const value = o[key];
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    fail(`${path}.${key}`, integer ? 'must be an integer' : 'must be a number');
  }
  return value;
}

function nnum(o: JsonObject, key: string, path: string): number | null {
  return o[key] === null || o[key] === undefined ? null : num(o, key, path);
}

/** An integer for an `integer` column: `min` up to 2,147,483,647. */
function int(o: JsonObject, key: string, path: string, min: number): number {
  const value = num(o, key, path, true);
  if (value < min || value > INT4_MAX)
    fail(`${path}.${key}`, `must be an integer from ${min} to ${INT4_MAX}`);
  return value;
}

/** A time in milliseconds for a `bigint` column: an integer from 0 up to 2^53 - 1. */
function time(o: JsonObject, key: string, path: string): number {
  const value = num(o, key, path, true);
  if (value < 0 || value > Number.MAX_SAFE_INTEGER) {
    fail(`${path}.${key}`, 'must be a time in milliseconds (an integer from 0 to 2^53 - 1)');
  }
  return value;
}

function ntime(o: JsonObject, key: string, path: string): number | null {
  return o[key] === null || o[key] === undefined ? null : time(o, key, path);
}

function bool(o: JsonObject, key: string, path: string): boolean {
  if (typeof o[key] !== 'boolean') fail(`${path}.${key}`, 'must be a boolean');
  return o[key];
}

function nbool(o: JsonObject, key: string, path: string): boolean | null {
  return o[key] === null || o[key] === undefined ? null : bool(o, key, path);
}

function oneOf<T extends string>(o: JsonObject, key: string, path: string, values: readonly T[]): T {
  const value = o[key];
  if (typeof value !== 'string' || !values.includes(value as T)) {
    fail(`${path}.${key}`, `must be one of ${values.join(', ')}`);
  }
  return value as T;
}

function strings(o: JsonObject, key: string, path: string): string[] {
  const list = arr(o, key, path);
  list.forEach((item, i) => {
    if (typeof item !== 'string') fail(`${path}.${key}[${i}]`, 'must be a string');
  });
  return list as string[];
}

/**
 * A session's `prompt_settings`: absent or null (no row), else an object whose `version` (1 when absent)
 * and `updated_at` fit their columns; other keys than the row's are ignored, like any record's.
 */
function promptSettings(o: JsonObject, path: string): BackupPromptSettings | null {
  if (o.prompt_settings === undefined || o.prompt_settings === null) return null;
  const at = `${path}.prompt_settings`;
  const p = obj(o.prompt_settings, at);
  const values = Object.fromEntries(BACKUP_PROMPT_SETTING_COLUMNS.map((key) => [key, p[key] ?? null]));
  return {
    ...(values as Record<BackupPromptSettingColumn, unknown>),
    version: p.version === undefined ? 1 : int(p, 'version', at, 1),
    updated_at: time(p, 'updated_at', at),
    updated_by: nstr(p, 'updated_by', at),
  };
}

/**
 * A session's `session_state_writes` (absent: none): each names a namespace of the backup and a floor of
 * this session's chat, with a `seq` unique on its floor; a present write has a value (any JSON nested at
 * most 128 levels), a delete has none.
 */
function sessionStateWrites(
  o: JsonObject,
  path: string,
  known: { namespaceIds: Set<string>; ownFloors: Set<string>; stateWriteIds: Set<string> },
): BackupSessionStateWrite[] {
  if (o.session_state_writes === undefined) return [];
  const seqs = new Set<string>();
  return arr(o, 'session_state_writes', path).map((value, i): BackupSessionStateWrite => {
    const at = `${path}.session_state_writes[${i}]`;
    const w = obj(value, at);
    const id = str(w, '_original_id', at, true);
    if (known.stateWriteIds.has(id)) fail(`${at}._original_id`, `repeats ${JSON.stringify(id)}`);
    known.stateWriteIds.add(id);
    const namespace = str(w, 'namespace_id_ref', at, true);
    if (!known.namespaceIds.has(namespace))
      fail(`${at}.namespace_id_ref`, 'names no namespace of the backup');
    const floor = str(w, 'floor_id_ref', at, true);
    if (!known.ownFloors.has(floor)) fail(`${at}.floor_id_ref`, 'names no floor of this session');
    const seq = int(w, 'seq', at, 1);
    if (seqs.has(`${floor}\u0000${seq}`)) fail(`${at}.seq`, `repeats ${seq} on its floor`);
    seqs.add(`${floor}\u0000${seq}`);
    const slot = str(w, 'slot', at, true);
    if ([...slot].length > 256) fail(`${at}.slot`, 'must be at most 256 characters');
    const present = bool(w, 'present', at);
    if (present && w.value === undefined) fail(`${at}.value`, 'is required when present is true');
    if (!present && w.value !== undefined && w.value !== null)
      fail(`${at}.value`, 'must be null for a delete');
    if (present && jsonNestedDeeperThan(w.value, CLIENT_DATA_LIMITS.valueMaxDepth))
      fail(`${at}.value`, `must nest at most ${CLIENT_DATA_LIMITS.valueMaxDepth} levels`);
    return {
      _original_id: id,
      namespace_id_ref: namespace,
      floor_id_ref: floor,
      seq,
      slot,
      present,
      value: present ? w.value : null,
      created_at: time(w, 'created_at', at),
    };
  });
}

/** Records of one kind: objects with a unique non-empty `_original_id`. */
function records(data: JsonObject, key: string, ids: Set<string>): Array<{ o: JsonObject; path: string }> {
  return arr(data, key, '$.data').map((value, i) => {
    const path = `$.data.${key}[${i}]`;
    const o = obj(value, path);
    const id = str(o, '_original_id', path, true);
    if (ids.has(id)) fail(`${path}._original_id`, `repeats ${JSON.stringify(id)}`);
    ids.add(id);
    return { o, path };
  });
}

function versions(o: JsonObject, path: string, versionIds: Set<string>): BackupAssetVersion[] {
  const numbers = new Set<number>();
  const list = arr(o, 'versions', path).map((value, i): BackupAssetVersion => {
    const at = `${path}.versions[${i}]`;
    const v = obj(value, at);
    const id = str(v, '_original_id', at, true);
    if (versionIds.has(id)) fail(`${at}._original_id`, `repeats ${JSON.stringify(id)}`);
    versionIds.add(id);
    const versionNo = int(v, 'version_no', at, 1);
    if (numbers.has(versionNo)) fail(`${at}.version_no`, `repeats ${versionNo}`);
    numbers.add(versionNo);
    if (v.payload === undefined || v.payload === null) fail(`${at}.payload`, 'is required');
    return {
      _original_id: id,
      version_no: versionNo,
      name: str(v, 'name', at),
      payload: v.payload,
      file: nstr(v, 'file', at),
      source_format: nstr(v, 'source_format', at),
      change_kind: str(v, 'change_kind', at, true),
      created_by_operation_id_ref: nstr(v, 'created_by_operation_id_ref', at),
      created_at: time(v, 'created_at', at),
    };
  });
  if (list.length === 0) fail(`${path}.versions`, 'must hold at least one version');
  return list;
}

function head(o: JsonObject, path: string, versionIds: Set<string>): BackupAssetHead {
  return {
    _original_id: o._original_id as string,
    name: str(o, 'name', path, true),
    source: str(o, 'source', path, true),
    created_at: time(o, 'created_at', path),
    updated_at: time(o, 'updated_at', path),
    versions: versions(o, path, versionIds),
  };
}

function latest(o: JsonObject, path: string, own: BackupAssetVersion[]): { ref: string; no: number } {
  const ref = str(o, 'latest_version_id_ref', path, true);
  const version = own.find((v) => v._original_id === ref);
  if (!version) fail(`${path}.latest_version_id_ref`, 'must name one of the asset’s versions');
  return { ref, no: int(o, 'version_no', path, 1) };
}

function ref(o: JsonObject, key: string, path: string, known: ReadonlySet<string>): string | null {
  const value = nstr(o, key, path);
  if (value !== null && !known.has(value)) fail(`${path}.${key}`, 'names no record of the backup');
  return value;
}

/**
 * Checks a backup document and parses each session's chat. Shape errors are 400 `import_parse_error`
 * with `details.path`; another spec is `import_parse_error`, a spec_version whose major is not 1 is 400
 * `import_unsupported_version`. Every `*_ref` must name a record of the document, except the
 * `created_by_operation_id_ref`s, which may name a log that was not exported (they restore as null).
 */
export function parseBackupDocument(input: unknown): ParsedBackup {
  const root = obj(input, '$');
  const unstorable = firstBadStringPath(root, '$', isUnstorableText);
  if (unstorable !== null) {
    fail(unstorable, 'contains a NUL character (U+0000) or an unpaired surrogate, which cannot be stored');
  }
  if (root.spec !== BACKUP_SPEC) fail('$.spec', `must be "${BACKUP_SPEC}"`);
  const version = str(root, 'spec_version', '$');
  const match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(version);
  if (!match) fail('$.spec_version', 'must look like 1.0.0');
  if (match[1] !== '1') {
    throw new DomainError(
      'import_unsupported_version',
      400,
      `backup spec_version ${version} is not supported (major 1 is)`,
      { spec_version: version },
    );
  }
  const warnings: string[] = [];
  if (match[2] !== undefined && Number(match[2]) > 0) {
    warnings.push(`backup spec_version ${version} is newer than ${BACKUP_SPEC_VERSION}; read as 1.0`);
  }
  const options = isPlainObject(root.options) ? root.options : {};
  const data = obj(root.data, '$.data');
  const versionIds = new Set<string>();

  const characterIds = new Set<string>();
  const characters = records(data, 'characters', characterIds).map(({ o, path }): BackupCharacter => {
    const base = head(o, path, versionIds);
    const l = latest(o, path, base.versions);
    base.versions.forEach((v, i) => {
      if (!isPlainObject(v.payload) || !isPlainObject(v.payload.data)) {
        fail(`${path}.versions[${i}].payload.data`, 'must be an object (a normalised card)');
      }
    });
    return {
      ...base,
      source_format: str(o, 'source_format', path, true),
      latest_version_id_ref: l.ref,
      version_no: l.no,
    };
  });

  const presetIds = new Set<string>();
  const presets = records(data, 'presets', presetIds).map(({ o, path }): BackupPreset => {
    const base = head(o, path, versionIds);
    const l = latest(o, path, base.versions);
    base.versions.forEach((v, i) => {
      if (!isPlainObject(v.payload)) fail(`${path}.versions[${i}].payload`, 'must be an object');
    });
    return { ...base, latest_version_id_ref: l.ref, version_no: l.no };
  });

  const regexIds = new Set<string>();
  const regexProfiles = records(data, 'regex_profiles', regexIds).map(({ o, path }): BackupRegexProfile => {
    const base = head(o, path, versionIds);
    const l = latest(o, path, base.versions);
    base.versions.forEach((v, i) => {
      if (!isPlainObject(v.payload) && !Array.isArray(v.payload)) {
        fail(`${path}.versions[${i}].payload`, 'must be an object or an array');
      }
    });
    const count = int(o, 'script_count', path, 0);
    return {
      ...base,
      latest_version_id_ref: l.ref,
      version_no: l.no,
      script_count: count,
      compat_report: obj(o.compat_report, `${path}.compat_report`),
    };
  });

  const worldbookIds = new Set<string>();
  const worldbooks = records(data, 'worldbooks', worldbookIds).map(({ o, path }): BackupWorldbook => {
    const base = head(o, path, versionIds);
    base.versions.forEach((v, i) => {
      const format = isPlainObject(v.payload) ? v.payload.format : undefined;
      if (format !== 'worldbook_snapshot' && format !== 'worldbook_delta') {
        fail(`${path}.versions[${i}].payload.format`, 'must be worldbook_snapshot or worldbook_delta');
      }
    });
    const bookVersion = int(o, 'version', path, 1);
    if (!base.versions.some((v) => v.version_no === bookVersion)) {
      fail(`${path}.version`, 'must be the number of one of the book’s versions');
    }
    const uids = new Set<number>();
    const entryIds = new Set<string>();
    const entries = arr(o, 'entries', path).map((value, i): BackupWorldbookEntry => {
      const at = `${path}.entries[${i}]`;
      const e = obj(value, at);
      const id = str(e, '_original_id', at, true);
      if (entryIds.has(id)) fail(`${at}._original_id`, `repeats ${JSON.stringify(id)}`);
      entryIds.add(id);
      const uid = int(e, 'uid', at, 0);
      if (uids.has(uid)) fail(`${at}.uid`, `repeats ${uid}`);
      uids.add(uid);
      return {
        _original_id: id,
        uid,
        keys: strings(e, 'keys', at),
        keys_secondary: strings(e, 'keys_secondary', at),
        content: str(e, 'content', at),
        comment: str(e, 'comment', at),
        selective: bool(e, 'selective', at),
        selective_logic: num(e, 'selective_logic', at),
        constant: bool(e, 'constant', at),
        position: num(e, 'position', at),
        order: num(e, 'order', at),
        depth: num(e, 'depth', at),
        role: num(e, 'role', at),
        disable: bool(e, 'disable', at),
        scan_depth: nnum(e, 'scan_depth', at),
        case_sensitive: nbool(e, 'case_sensitive', at),
        match_whole_words: nbool(e, 'match_whole_words', at),
        exclude_recursion: bool(e, 'exclude_recursion', at),
        prevent_recursion: bool(e, 'prevent_recursion', at),
        delay_until_recursion: nnum(e, 'delay_until_recursion', at),
        outlet_name: str(e, 'outlet_name', at),
        raw: obj(e.raw, `${at}.raw`),
        created_at: time(e, 'created_at', at),
        updated_at: time(e, 'updated_at', at),
      };
    });
    return {
      ...base,
      version: bookVersion,
      extra: obj(o.extra, `${path}.extra`),
      snapshot_version: int(o, 'snapshot_version', path, 1),
      delta_entry_count: int(o, 'delta_entry_count', path, 0),
      entries,
    };
  });

  const userCardIds = new Set<string>();
  const userCardNames = new Set<string>();
  const userCards = records(data, 'user_cards', userCardIds).map(({ o, path }): BackupUserCard => {
    const snapshot = obj(o.snapshot, `${path}.snapshot`);
    const name = str(o, 'name', path, true);
    if (snapshot.name !== name) fail(`${path}.snapshot.name`, 'must equal the card’s name');
    if (userCardNames.has(name)) fail(`${path}.name`, `repeats ${JSON.stringify(name)}`);
    userCardNames.add(name);
    return {
      _original_id: o._original_id as string,
      name,
      status: oneOf(o, 'status', path, ['active', 'disabled'] as const),
      snapshot,
      revision: int(o, 'revision', path, 1),
      created_at: time(o, 'created_at', path),
      updated_at: time(o, 'updated_at', path),
    };
  });

  const namespaceIds = new Set<string>();
  const namespaceNames = new Set<string>();
  const clientDataNamespaces = (
    data.client_data_namespaces === undefined ? [] : records(data, 'client_data_namespaces', namespaceIds)
  ).map(({ o, path }): BackupClientDataNamespace => {
    const name = str(o, 'name', path, true);
    if (!CLIENT_DATA_LIMITS.namespaceName.test(name) || PUBLIC_NAMESPACES.includes(name))
      fail(`${path}.name`, 'must be a namespace name an account can register');
    if (namespaceNames.has(name)) fail(`${path}.name`, `repeats ${JSON.stringify(name)}`);
    namespaceNames.add(name);
    const description = nstr(o, 'description', path);
    if (description !== null && [...description].length > CLIENT_DATA_LIMITS.descriptionMaxChars)
      fail(`${path}.description`, `must be at most ${CLIENT_DATA_LIMITS.descriptionMaxChars} characters`);
    const maxItems = int(o, 'max_items', path, 1);
    if (maxItems > CLIENT_DATA_LIMITS.maxItemsCeiling)
      fail(`${path}.max_items`, `must be at most ${CLIENT_DATA_LIMITS.maxItemsCeiling}`);
    const maxBytes = int(o, 'max_bytes', path, 1);
    if (maxBytes > CLIENT_DATA_LIMITS.maxBytesCeiling)
      fail(`${path}.max_bytes`, `must be at most ${CLIENT_DATA_LIMITS.maxBytesCeiling}`);
    return {
      _original_id: o._original_id as string,
      name,
      description,
      replay_policy: oneOf(o, 'replay_policy', path, REPLAY_POLICIES),
      max_items: maxItems,
      max_bytes: maxBytes,
      created_at: time(o, 'created_at', path),
      updated_at: time(o, 'updated_at', path),
    };
  });

  const characterVersionIds = new Set(characters.flatMap((c) => c.versions.map((v) => v._original_id)));
  const sessionIds = new Set<string>();
  const stateWriteIds = new Set<string>();
  const floorIds = new Set<string>();
  const chats: ParsedNchat[] = [];
  const sessions = records(data, 'sessions', sessionIds).map(({ o, path }): BackupSession => {
    const chat = obj(o.chat, `${path}.chat`);
    let parsed: ParsedNchat;
    try {
      parsed = parseNchat(JSON.stringify(chat));
    } catch (error) {
      if (error instanceof DomainError && error.status === 400) {
        const inner =
          isPlainObject(error.details) && typeof error.details.path === 'string' ? error.details.path : '$';
        const at = `${path}.chat${inner.slice(1)}`;
        throw new DomainError(error.code, 400, `${path}.chat: ${error.message}`, { path: at });
      }
      throw error;
    }
    chats.push(parsed);
    const ownFloors = new Set<string>();
    for (const floor of parsed.chat.data.floors) {
      ownFloors.add(floor._original_id);
      if (floorIds.has(floor._original_id)) {
        fail(
          `${path}.chat.data.floors`,
          `repeats the floor ${JSON.stringify(floor._original_id)} of another session`,
        );
      }
      floorIds.add(floor._original_id);
    }
    const characterRef = ref(o, 'character_id_ref', path, characterIds);
    const versionRef = ref(o, 'character_version_id_ref', path, characterVersionIds);
    if (versionRef !== null) {
      const owner = characters.find((c) => c.versions.some((v) => v._original_id === versionRef));
      if (owner?._original_id !== characterRef) {
        fail(`${path}.character_version_id_ref`, 'must name a version of the session’s character');
      }
    }
    const worldbookRefs = strings(o, 'worldbook_id_refs', path);
    worldbookRefs.forEach((id, i) => {
      if (!worldbookIds.has(id)) fail(`${path}.worldbook_id_refs[${i}]`, 'names no record of the backup');
    });
    const title = str(o, 'title', path, true);
    if ([...title].length > BACKUP_SESSION_TITLE_MAX) {
      fail(`${path}.title`, `must be at most ${BACKUP_SESSION_TITLE_MAX} characters`);
    }
    return {
      _original_id: o._original_id as string,
      title,
      status: oneOf(o, 'status', path, ['active', 'archived'] as const),
      archived_at: ntime(o, 'archived_at', path),
      character_id_ref: characterRef,
      character_version_id_ref: versionRef,
      user_card_id_ref: ref(o, 'user_card_id_ref', path, userCardIds),
      preset_id_ref: ref(o, 'preset_id_ref', path, presetIds),
      worldbook_id_refs: worldbookRefs,
      regex_profile_id_ref: ref(o, 'regex_profile_id_ref', path, regexIds),
      created_at: time(o, 'created_at', path),
      updated_at: time(o, 'updated_at', path),
      chat,
      prompt_settings: promptSettings(o, path),
      session_state_writes: sessionStateWrites(o, path, { namespaceIds, ownFloors, stateWriteIds }),
    };
  });

  const versionKinds = new Map<string, BackupAssetKind>();
  for (const [kind, list] of [
    ['character', characters],
    ['preset', presets],
    ['regex_profile', regexProfiles],
    ['worldbook', worldbooks],
  ] as const) {
    for (const asset of list) for (const v of asset.versions) versionKinds.set(v._original_id, kind);
  }
  const tagIds = new Set<string>();
  const tagNames = new Set<string>();
  const vcTags = (data.vc_tags === undefined ? [] : records(data, 'vc_tags', tagIds)).map(
    ({ o, path }): BackupVcTag => {
      const name = str(o, 'name', path, true);
      if (tagNames.has(name)) fail(`${path}.name`, `repeats ${JSON.stringify(name)}`);
      tagNames.add(name);
      const targetType = oneOf(o, 'target_type', path, ['floor', 'asset_version'] as const);
      const target = str(o, 'target_id_ref', path, true);
      let kind: BackupAssetKind | null = null;
      if (targetType === 'floor') {
        if (!floorIds.has(target)) fail(`${path}.target_id_ref`, 'names no floor of the backup’s sessions');
      } else {
        kind = versionKinds.get(target) ?? null;
        if (kind === null) fail(`${path}.target_id_ref`, 'names no asset version of the backup');
      }
      return {
        _original_id: o._original_id as string,
        name,
        target_type: targetType,
        target_id_ref: target,
        target_asset_kind: kind,
        session_id_ref: ref(o, 'session_id_ref', path, sessionIds),
        metadata: o.metadata ?? null,
        created_by_operation_id_ref: nstr(o, 'created_by_operation_id_ref', path),
        created_at: time(o, 'created_at', path),
      };
    },
  );

  const logIds = new Set<string>();
  const operationLogs = (
    data.operation_logs === undefined ? [] : records(data, 'operation_logs', logIds)
  ).map(({ o, path }): BackupOperationLog => ({
    _original_id: o._original_id as string,
    actor_type: nstr(o, 'actor_type', path),
    actor_id: nstr(o, 'actor_id', path),
    operation_group_id: nstr(o, 'operation_group_id', path),
    request_id: nstr(o, 'request_id', path),
    workspace_id: nstr(o, 'workspace_id', path),
    project_id: nstr(o, 'project_id', path),
    source_type: nstr(o, 'source_type', path),
    action: str(o, 'action', path, true),
    status: oneOf(o, 'status', path, ['succeeded', 'failed', 'denied', 'cancelled'] as const),
    session_id: nstr(o, 'session_id', path),
    branch_id: nstr(o, 'branch_id', path),
    floor_id: nstr(o, 'floor_id', path),
    run_id: nstr(o, 'run_id', path),
    target_type: nstr(o, 'target_type', path),
    target_id: nstr(o, 'target_id', path),
    before_ref: o.before_ref ?? null,
    after_ref: o.after_ref ?? null,
    diff: o.diff ?? null,
    metadata: o.metadata ?? null,
    created_at: time(o, 'created_at', path),
  }));

  const mode = BACKUP_LOG_MODES.includes(options.include_operation_logs as BackupLogMode)
    ? (options.include_operation_logs as BackupLogMode)
    : 'none';
  return {
    document: {
      spec: BACKUP_SPEC,
      spec_version: version,
      exported_at: typeof root.exported_at === 'number' ? root.exported_at : 0,
      export_app_version: typeof root.export_app_version === 'string' ? root.export_app_version : '',
      options: {
        include_operation_logs: mode,
        include_vc_tags: typeof options.include_vc_tags === 'boolean' ? options.include_vc_tags : true,
      },
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
    },
    chats,
    warnings,
  };
}

/**
 * The names a restored tag or user card may get, in order: its own, then with ` (restored)` appended
 * once, twice, ... (the original cut so each stays within 200 characters).
 */
export function restoredNameCandidates(name: string): string[] {
  const chars = [...name];
  const out: string[] = [];
  for (let n = 0; ; n++) {
    const suffix = RESTORED_NAME_SUFFIX.repeat(n);
    const room = RESTORED_NAME_MAX - [...suffix].length;
    if (room < 1) return out;
    out.push(chars.slice(0, room).join('') + suffix);
  }
}

/** The first of `restoredNameCandidates(name)` that is not taken. */
export function restoredName(name: string, isTaken: (candidate: string) => boolean): string {
  const free = restoredNameCandidates(name).find((candidate) => !isTaken(candidate));
  if (free === undefined) throw importParseError(`no free name for ${JSON.stringify(name)}`, { name });
  return free;
}
