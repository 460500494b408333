import { createHash } from 'node:crypto';
import {
  DomainError,
  isPlainObject,
  LruMap,
  personaPlacementOfSnapshot,
  type NormalizedWorldbookEntry,
  type PersonaPlacement,
} from '@hearth/domain';
import type { PromptEngineInput } from '@hearth/domain/prompt/engine';
import { INJECTION_LIMITS, type InjectionItem } from '@hearth/domain/prompt/injections';
import type { PolicyLayer } from '@hearth/domain/prompt/policy';
import {
  encodingForModel,
  tokenCounter,
  type TokenEncoding,
} from '@hearth/domain/prompt/shared/token-counter';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  charactersRepository,
  conversationRepository,
  presetsRepository,
  promptRuntimeRepository,
  regexProfilesRepository,
  sessionPromptSettingsRepository,
  transcriptRepository,
  turnHistoryRepository,
  turnStateRepository,
  userCardsRepository,
  worldbooksRepository,
  type BranchRow,
  type Executor,
  type FloorRow,
  type LineageMessageRow,
  type LineRange,
  type SessionRow,
  type BranchState,
  type MessageRow,
  type VariableRow,
} from '@hearth/persistence';
import type { AppConfig } from '@hearth/platform';
import { characterLorebook, storedCardOf } from '../characters/character-rules';
import { isInLineage, readBranchHistory } from '../conversation/floor-reads';
import { TurnHistoryCache } from './history-cache';
import { deepFreeze } from './deep-freeze';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { readAssetVersionData } from '../presets/library-asset-versions';
import { effectivePromptSettings, storedSettings } from '../prompt-settings/prompt-settings-rules';
import { contextLayersFromRows, loadContextLayers } from '../variables/variable-context';
import { flattenLayers } from '../variables/variable-rules';
import { loadVariableViews } from '../variables/variable-views';
import { rowToNormalized } from '../worldbooks/worldbook-rules';
import type {
  FloorStateSnapshot,
  RequestInjectionInput,
  TurnContext,
  TurnContextRequest,
  TurnContextWarning,
  TurnModel,
} from './turn-context.types';

export * from './turn-context.types';

/** Where the loader gets what is not in the database. */
export interface TurnContextDeps {
  /** The permission gate (default: one over `db`). */
  access?: ProjectAccess;
  /** The `llm` configuration, the model source until profile bindings are wired into turns. */
  config?: Pick<AppConfig, 'llm'> | null;
}

const branchNotFound = () => new DomainError('branch_not_found', 404, 'Branch not found');
const sourceFloorNotFound = () =>
  new DomainError('source_floor_not_found', 404, 'Source floor not found in this branch');

/** Request-level injection keys of spec 2 ("Request-level injection item"). */
const REQUEST_INJECTION_KEYS = new Set([
  'source_kind',
  'title',
  'content',
  'placement',
  'placement_params',
  'order',
  'scope',
]);

/**
 * Everything a turn knows, loaded from storage as the prompt engine's plain input (docs/decisions.md
 * "Turn context and dry-run"). Checks, in order: the request injections (400
 * `invalid_injection_payload`), the session (404 `not_found`, or `request.sessionNotFoundCode`, also for a Project the caller is
 * not a member of) and access (`read`: `project.read`; `write`: `project.session.write`, 403
 * `project_access_denied`), the branch (`main` by default; 404 `branch_not_found`), the source floor
 * (404 `source_floor_not_found` unless it is in the branch's lineage). Library objects that are gone
 * (deleted preset, worldbook, user card, character) are skipped with a warning, never an error. Reads
 * only: nothing is written, whatever the access mode.
 */
export async function loadTurnContext(
  db: Executor,
  actor: Actor,
  request: TurnContextRequest,
  deps: TurnContextDeps = {},
): Promise<TurnContext> {
  const access = deps.access ?? new ProjectAccess(db);
  const now = request.now ?? Date.now();
  const warnings: TurnContextWarning[] = [];
  const requestInjections = checkRequestInjections(request.requestInjections);

  // The session with its Project and the branch with what a turn reads of it are read at once
  // (docs/decisions.md "Turn latency"); nothing read is used before the access check has passed, and
  // a missing session still answers before a missing branch.
  const sessionRead = turnStateRepository.sessionWithProject(
    db,
    request.sessionId,
    request.sessionKind ?? 'standard',
  );
  const branchRead = readBranchState(db, request.sessionId, request.branchId ?? null, now);
  branchRead.catch(() => undefined);
  const found = await sessionRead;
  const notFoundCode = request.sessionNotFoundCode ?? 'not_found';
  const notFoundMessage = 'Session not found';
  if (!found) throw new DomainError(notFoundCode, 404, notFoundMessage);
  const { session } = found;

  // The library reads depend only on the session: they start while access, branch and floor are
  // checked (marked handled, so an error below never leaves a rejection unhandled; awaited below).
  const characterRead = loadCharacter(db, session, warnings);
  const personaRead = loadPersona(db, session, warnings);
  const presetRead = loadPreset(db, session, warnings);
  const regexRead = loadRegexProfile(db, session, warnings);
  const worldbooksRead = loadWorldbooks(db, session, warnings);
  for (const read of [characterRead, personaRead, presetRead, regexRead, worldbooksRead])
    read.catch(() => undefined);
  const { project, role } = await access.requireOn(
    actor,
    found.project,
    request.access === 'write' ? 'project.session.write' : 'project.read',
    { db, notFoundCode, notFoundMessage },
  );

  const state = (await branchRead) ?? (await emptyMainBranch(db, session, request, now));
  const { branch, head, headRanges, historyRev, runtime } = state;
  const parentFloor = await resolveParentFloor(db, session, branch, head, request.sourceFloorId ?? null);
  const nextFloorNo = parentFloor ? parentFloor.floor_no + 1 : 0;

  const model = turnModelFromConfig(deps.config ?? null);
  const encoding = encodingForModel(model?.model_id ?? null);

  const [character, persona, preset, regexProfile, worldbooks, history, variables] = await Promise.all([
    characterRead,
    personaRead,
    presetRead,
    regexRead,
    worldbooksRead,
    readTurnHistory(
      db,
      session.id,
      branch,
      historyRev,
      parentFloor,
      parentFloor === head ? headRanges : null,
    ),
    loadCheckedTurnVariables(
      db,
      session.account_id,
      {
        sessionId: session.id,
        branchId: branch.head_floor_id === null && branch.id === MAIN_BRANCH ? null : branch.id,
        floorId: parentFloor?.id ?? null,
      },
      // Read with the branch when the turn continues from the head of a real branch.
      branch.id !== MAIN_BRANCH && (parentFloor?.id ?? null) === branch.head_floor_id
        ? state.headVariables
        : null,
    ),
  ]);
  const settingsRow = state.promptSettings ?? undefined;
  // The session's prompt settings (docs/decisions.md "Prompt settings"): written value, else (the
  // persona's place) the user card's, else ST's default.
  const storedPromptSettings = storedSettings(settingsRow);
  const promptSettings = effectivePromptSettings(storedPromptSettings, persona.placement);

  const card = character?.data ?? null;
  const charName = typeof card?.name === 'string' && card.name ? card.name : 'Assistant';
  const lorebooks: PromptEngineInput['lorebooks'] = [];
  // ST `getCharacterLore`: a character world that is also selected globally is used once, as global.
  const linkedWorld = linkedWorldName(card);
  const boundNames = new Set(worldbooks.map((b) => b.name));
  const characterBookBound =
    character?.book &&
    ((linkedWorld !== null && boundNames.has(linkedWorld)) ||
      (character.book.name !== null && boundNames.has(character.book.name)));
  if (characterBookBound) {
    warnings.push({
      code: 'character_book_bound_globally',
      message: 'The card’s lorebook is also bound to the session; it is used once, as the bound worldbook',
    });
  }
  if (character?.book && !characterBookBound) {
    lorebooks.push({
      id: `${character.versionId}:character_book`,
      name: character.book.name ?? `${charName} lorebook`,
      source: 'character',
      version: character.versionNo,
      updated_at: character.createdAt,
      entries: character.book.entries,
    });
  }
  lorebooks.push(...worldbooks);

  const scripts: NonNullable<PromptEngineInput['regex']>['scripts'] = [
    ...(regexProfile?.scripts ?? []).map((script) => ({ script, scope: 'global' as const })),
    ...embeddedRegexScripts(preset?.data).map((script) => ({ script, scope: 'preset' as const })),
    ...embeddedRegexScripts(card).map((script) => ({ script, scope: 'character' as const })),
  ];

  const snapshot = readFloorStateSnapshot(parentFloor);
  const policyLayers: PolicyLayer[] = [];
  if (runtime.sessionPolicy) policyLayers.push({ source: 'session_policy', value: runtime.sessionPolicy });
  if (runtime.branchPolicy) policyLayers.push({ source: 'branch_policy', value: runtime.branchPolicy });
  if (request.policyOverride && Object.keys(request.policyOverride).length > 0)
    policyLayers.push({ source: 'request_override', value: request.policyOverride });

  const injections: InjectionItem[] = [
    ...runtime.injections.map((row): InjectionItem => ({
      id: row.id,
      scope: row.scope,
      source_kind: row.source_kind,
      title: row.title,
      content: row.content,
      placement: row.placement,
      placement_params: row.placement_params ?? undefined,
      order: row.order,
      enabled: row.enabled,
      mode_scope: row.mode_scope,
      expires_at: row.expires_at,
    })),
    ...requestInjections,
  ];

  const engineInput: PromptEngineInput = {
    seed: turnSeed(session.id, branch.id, parentFloor?.id ?? null, request.attemptId ?? null),
    now,
    intent: request.intent,
    prompt_mode: promptSettings.prompt_mode,
    macro_engine: promptSettings.macro_engine,
    post_processing: promptSettings.post_processing,
    timezone: promptSettings.timezone,
    lorebook_settings: storedPromptSettings.lorebook,
    session_id: session.id,
    user: {
      name: persona.name,
      description: persona.description,
      position: promptSettings.persona_position,
      depth: promptSettings.persona_depth,
      role: promptSettings.persona_role,
    },
    authors_note: promptSettings.authors_note,
    character: character ? { id: character.characterId, version_id: character.versionId, data: card! } : null,
    preset: preset
      ? { id: preset.id, version: preset.versionNo, updated_at: preset.updatedAt, data: preset.data }
      : null,
    lorebooks,
    regex:
      regexProfile || scripts.length > 0
        ? {
            profile_id: regexProfile?.id ?? null,
            version: regexProfile?.versionNo ?? null,
            updated_at: regexProfile?.updatedAt ?? null,
            scripts,
          }
        : null,
    history: historyEntries(history, { user: persona.name, char: charName, encoding }),
    user_input: request.userInput,
    next_floor_no: nextFloorNo,
    variables,
    timed_state: snapshot.timed_state ?? null,
    memory_summary: null,
    policy_layers: policyLayers,
    injections,
    provider: { kind: model?.provider ?? null, model_id: model?.model_id ?? null },
    generation_params: request.generationParams ?? undefined,
    debug: request.debug ?? undefined,
    token_encoding: encoding,
  };
  return {
    session,
    project,
    role,
    branch,
    parentFloor,
    nextFloorNo,
    engineInput,
    model,
    warnings,
    runningRun: state.runningRun,
    historyRev: historyRev ?? null,
  };
}

/**
 * The turn's seed: a digest of session, branch, parent floor and attempt ids. A dry-run and the first
 * attempt of a turn from the same state (no attempt id) share it, so respond sends what dry-run showed;
 * a retry passes its attempt (page) id and draws differently.
 */
export function turnSeed(
  sessionId: string,
  branchId: string,
  parentFloorId: string | null,
  attemptId: string | null,
): string {
  return createHash('sha256')
    .update([sessionId, branchId, parentFloorId ?? '-', attemptId ?? '-'].join('\n'))
    .digest('hex')
    .slice(0, 32);
}

/** The model of a turn from the `llm` configuration (env source), or null when none is configured. */
export function turnModelFromConfig(config: Pick<AppConfig, 'llm'> | null): TurnModel | null {
  if (!config?.llm.provider || !config.llm.model) return null;
  return { provider: config.llm.provider, model_id: config.llm.model, base_url: config.llm.baseUrl ?? null };
}

/**
 * The variable views a turn reads (local: branch-centred at the parent floor; global: the account's),
 * through the variables feature (`loadVariableViews`).
 */
export async function loadTurnVariables(
  db: Executor,
  accountId: string,
  where: { sessionId: string; branchId: string | null; floorId: string | null },
): Promise<{ local: Record<string, unknown>; global: Record<string, unknown> }> {
  return loadVariableViews(db, accountId, where);
}

/**
 * `loadTurnVariables` for a context the turn loader has already checked (the session is the account's,
 * the branch is the session's, the parent floor is the branch head or in its lineage), so the variable
 * layers are read at once without reading the session, floor and branch again (docs/decisions.md
 * "Turn latency").
 */
async function loadCheckedTurnVariables(
  db: Executor,
  accountId: string,
  where: { sessionId: string; branchId: string | null; floorId: string | null },
  rows: VariableRow[] | null,
): Promise<{ local: Record<string, unknown>; global: Record<string, unknown> }> {
  const ctx = { accountId, ...where, pageId: null };
  const layers = rows ? contextLayersFromRows(ctx, rows) : await loadContextLayers(db, ctx);
  return {
    local: flattenLayers(layers.filter((l) => l.scope !== 'global')),
    global: flattenLayers(layers.filter((l) => l.scope === 'global')),
  };
}

/** The parent floor's stored state (timed effects, variables); `{}` when it stored none. */
export function readFloorStateSnapshot(floor: FloorRow | null): FloorStateSnapshot {
  const value = floor?.state_snapshot;
  if (!isPlainObject(value)) return {};
  const snapshot = value as Record<string, unknown>;
  const timed = snapshot.timed_state;
  return {
    timed_state:
      isPlainObject(timed) && isPlainObject(timed.sticky) && isPlainObject(timed.cooldown)
        ? (timed as unknown as FloorStateSnapshot['timed_state'])
        : null,
    variables: isPlainObject(snapshot.variables)
      ? (snapshot.variables as FloorStateSnapshot['variables'])
      : null,
  };
}

/**
 * Spec 2 request-level injections: at most 32 objects, `source_kind` `client_injection`, `scope`
 * absent or `request`, `title`/`content`/`placement` strings, `order` an integer, `placement_params` an
 * object or null, no other key; else 400 `invalid_injection_payload` with `details.fields`. Empty
 * text, unknown placements, bad placement parameters and over-long content are not errors: the engine
 * reports them as `not_applied_reason`s (spec 2).
 */
export function checkRequestInjections(
  items: readonly RequestInjectionInput[] | null | undefined,
): InjectionItem[] {
  if (items === null || items === undefined) return [];
  const fields: Array<{ field: string; problems: string[] }> = [];
  const problem = (field: string, message: string) => fields.push({ field, problems: [message] });
  if (!Array.isArray(items)) {
    problem('prompt_runtime_injections', 'prompt_runtime_injections must be an array');
  } else if (items.length > INJECTION_LIMITS.per_request) {
    problem(
      'prompt_runtime_injections',
      `at most ${INJECTION_LIMITS.per_request} request-level injections are allowed (got ${items.length})`,
    );
  } else {
    items.forEach((item, i) => {
      const at = `prompt_runtime_injections[${i}]`;
      if (!isPlainObject(item)) return problem(at, 'each injection must be an object');
      for (const key of Object.keys(item))
        if (!REQUEST_INJECTION_KEYS.has(key))
          problem(`${at}.${key}`, `${key} is not a request injection field`);
      if (item.source_kind !== 'client_injection')
        problem(`${at}.source_kind`, 'source_kind must be client_injection');
      if (item.scope !== undefined && item.scope !== null && item.scope !== 'request')
        problem(`${at}.scope`, 'scope must be request');
      for (const key of ['title', 'content', 'placement'] as const)
        if (typeof item[key] !== 'string') problem(`${at}.${key}`, `${key} must be a string`);
      if (item.order !== undefined && item.order !== null && !Number.isSafeInteger(item.order))
        problem(`${at}.order`, 'order must be an integer');
      if (
        item.placement_params !== undefined &&
        item.placement_params !== null &&
        !isPlainObject(item.placement_params)
      )
        problem(`${at}.placement_params`, 'placement_params must be an object or null');
    });
  }
  if (fields.length > 0)
    throw new DomainError('invalid_injection_payload', 400, 'Invalid request-level injections', { fields });
  return (items as RequestInjectionInput[]).map((item) => ({
    scope: 'request',
    source_kind: 'client_injection',
    title: item.title as string,
    content: item.content as string,
    placement: item.placement as string,
    placement_params: item.placement_params ?? undefined,
    order: typeof item.order === 'number' ? item.order : undefined,
  }));
}

/**
 * The branch (`main` by default), its head floor (null: none, or gone) and the head's lineage ranges,
 * in one read.
 */
/**
 * The branch a turn runs on with its state (`main` by default, or a branch id of the session), or
 * undefined when the session has no `main` branch row yet (see emptyMainBranch); 404
 * `branch_not_found` for any other missing branch.
 */
async function readBranchState(
  db: Executor,
  sessionId: string,
  branchId: string | null,
  now: number,
): Promise<BranchState | undefined> {
  if (branchId === null || branchId === MAIN_BRANCH) {
    const main = await turnStateRepository.branchState(db, sessionId, { name: MAIN_BRANCH }, now);
    if (main || branchId === null) return main;
    throw branchNotFound();
  }
  const found = await turnStateRepository.branchState(db, sessionId, { id: branchId }, now);
  if (!found) throw branchNotFound();
  return found;
}

/**
 * A session made before branches existed and never touched since: an empty `main` (not written). Its
 * policies, injections and settings are read on their own, as the branch statement had no row.
 */
async function emptyMainBranch(
  db: Executor,
  session: SessionRow,
  request: TurnContextRequest,
  now: number,
): Promise<BranchState> {
  if (request.branchId && request.branchId !== MAIN_BRANCH) throw branchNotFound();
  const [runtime, settings] = await Promise.all([
    promptRuntimeRepository.loadForTurn(db, session.id, MAIN_BRANCH, now),
    sessionPromptSettingsRepository.find(db, session.id),
  ]);
  return {
    branch: {
      id: MAIN_BRANCH,
      account_id: session.account_id,
      session_id: session.id,
      name: MAIN_BRANCH,
      source_floor_id: null,
      head_floor_id: null,
      created_at: session.created_at,
      updated_at: session.updated_at,
    },
    head: null,
    headRanges: [],
    historyRev: '0:0',
    runtime,
    promptSettings: settings ?? null,
    runningRun: null,
    headVariables: [],
  };
}

async function resolveParentFloor(
  db: Executor,
  session: SessionRow,
  branch: BranchRow,
  branchHead: FloorRow | null,
  sourceFloorId: string | null,
): Promise<FloorRow | null> {
  const head = branch.head_floor_id ? (branchHead ?? undefined) : undefined;
  if (sourceFloorId === null) return head ?? null;
  const floor = await conversationRepository.findFloor(db, sourceFloorId);
  if (!floor || floor.session_id !== session.id || !head) throw sourceFloorNotFound();
  if (!(await isInLineage(db, head, floor))) throw sourceFloorNotFound();
  return floor;
}

interface LoadedCharacter {
  characterId: string | null;
  versionId: string;
  versionNo: number;
  createdAt: number;
  data: Record<string, unknown>;
  book: { name: string | null; entries: NormalizedWorldbookEntry[] } | null;
}

async function loadCharacter(
  db: Executor,
  session: SessionRow,
  warnings: TurnContextWarning[],
): Promise<LoadedCharacter | null> {
  let versionId: string;
  if (session.character_version_id) {
    versionId = session.character_version_id;
  } else if (session.character_id) {
    const character = await charactersRepository.findOfAccount(db, session.account_id, session.character_id);
    versionId = character?.latest_version_id ?? '';
  } else {
    return null;
  }
  // A version never changes: what was loaded (and checked to be a character of this account) once
  // is reused, with the same lorebook entries array (the engine's per-book preparation is kept).
  const key = `${session.account_id}\n${versionId}`;
  const cached = characterVersions.get(key);
  if (cached) {
    if (cached.bookUnreadable) warnings.push(characterBookUnreadable());
    return cached.character;
  }
  const version = versionId
    ? session.character_version_id
      ? await assetVersionsRepository.findOfAccount(db, session.account_id, versionId, 'character')
      : await assetVersionsRepository.findOfAsset(db, session.character_id!, versionId)
    : undefined;
  if (!version) {
    warnings.push({
      code: 'character_unavailable',
      message: 'The session’s character (version) is not available; the turn runs without a character',
      character_id: session.character_id,
      character_version_id: session.character_version_id,
    });
    return null;
  }
  const stored = storedCardOf(version);
  let book: LoadedCharacter['book'] = null;
  let bookUnreadable = false;
  try {
    const normalized = characterLorebook(stored);
    if (normalized) book = { name: normalized.name ?? null, entries: normalized.entries };
  } catch {
    bookUnreadable = true;
    warnings.push(characterBookUnreadable());
  }
  const character: LoadedCharacter = deepFreeze({
    characterId: version.asset_id,
    versionId: version.id,
    versionNo: version.version_no,
    createdAt: version.created_at,
    data: stored.data as Record<string, unknown>,
    book,
  });
  characterVersions.set(key, { character, bookUnreadable });
  return character;
}

const characterBookUnreadable = (): TurnContextWarning => ({
  code: 'character_book_unreadable',
  message: 'The card’s character_book cannot be read; skipped',
});

interface LoadedPersona {
  name: string;
  description: string | null;
  /** The card's own `position`/`depth`/`role` (ST persona descriptor), below the session's settings. */
  placement: PersonaPlacement;
}

async function loadPersona(
  db: Executor,
  session: SessionRow,
  warnings: TurnContextWarning[],
): Promise<LoadedPersona> {
  if (!session.user_card_id) return { name: 'User', description: null, placement: {} };
  const card = await userCardsRepository.findLive(db, session.account_id, session.user_card_id);
  if (!card) {
    warnings.push({
      code: 'user_card_unavailable',
      message: 'The session’s user card is not available; the persona is `User`',
      user_card_id: session.user_card_id,
    });
    return { name: 'User', description: null, placement: {} };
  }
  const snapshot = (isPlainObject(card.snapshot) ? card.snapshot : {}) as Record<string, unknown>;
  const name = typeof snapshot.name === 'string' && snapshot.name ? snapshot.name : card.name;
  return {
    name,
    description: typeof snapshot.description === 'string' ? snapshot.description : null,
    placement: personaPlacementOfSnapshot(snapshot),
  };
}

async function loadPreset(
  db: Executor,
  session: SessionRow,
  warnings: TurnContextWarning[],
): Promise<{ id: string; versionNo: number; updatedAt: number; data: unknown } | null> {
  if (!session.preset_id) return null;
  const preset = await presetsRepository.findOfAccount(db, session.account_id, session.preset_id);
  // The version's parsed file, once per version (versions never change).
  let data = preset ? presetVersions.get(preset.latest_version_id) : undefined;
  if (preset && data === undefined) {
    const version = await assetVersionsRepository.findOfAsset(db, preset.id, preset.latest_version_id);
    if (version) {
      data = deepFreeze(await readAssetVersionData(db, version));
      presetVersions.set(preset.latest_version_id, data);
    }
  }
  if (!preset || data === undefined) {
    warnings.push({
      code: 'preset_unavailable',
      message: 'The session’s preset is not available; the turn runs without a preset',
      preset_id: session.preset_id,
    });
    return null;
  }
  return { id: preset.id, versionNo: preset.version_no, updatedAt: preset.updated_at, data };
}

/**
 * Loaded asset versions, by version id (a version is immutable; docs/decisions.md "Turn history
 * cache"). Frozen, so nothing a turn does can change what the next turn reads. Characters are keyed
 * with the account that loaded them: a hit never skips the ownership check of another account.
 */
const characterVersions = new LruMap<string, { character: LoadedCharacter; bookUnreadable: boolean }>(500);
const presetVersions = new LruMap<string, unknown>(200);

async function loadRegexProfile(
  db: Executor,
  session: SessionRow,
  warnings: TurnContextWarning[],
): Promise<{
  id: string;
  versionNo: number;
  updatedAt: number;
  scripts: Array<Record<string, unknown>>;
} | null> {
  if (!session.regex_profile_id) return null;
  const profile = await regexProfilesRepository.findOfAccount(
    db,
    session.account_id,
    session.regex_profile_id,
  );
  const version = profile
    ? await assetVersionsRepository.findOfAsset(db, profile.id, profile.latest_version_id)
    : undefined;
  if (!profile || !version) {
    warnings.push({
      code: 'regex_profile_unavailable',
      message: 'The session’s regex profile is not available; its scripts are skipped',
      regex_profile_id: session.regex_profile_id,
    });
    return null;
  }
  const data = await readAssetVersionData(db, version);
  const list = Array.isArray(data) ? data : isPlainObject(data) ? [data] : [];
  return {
    id: profile.id,
    versionNo: profile.version_no,
    updatedAt: profile.updated_at,
    scripts: list.filter((s): s is Record<string, unknown> => isPlainObject(s)),
  };
}

/**
 * The lineage of the parent floor (its line ranges), active pages only, oldest first. Committed floors
 * come from the history cache under the session's revision (docs/decisions.md "Turn history cache");
 * only the floors it does not hold are read. Floors written before lines (test factories) are read by
 * the conversation's general reader.
 */
async function readTurnHistory(
  db: Executor,
  sessionId: string,
  branch: BranchRow,
  historyRev: string | null,
  parent: FloorRow | null,
  parentRanges: LineRange[] | null,
): Promise<Array<Pick<LineageMessageRow, HistoryColumns>>> {
  if (!parent) return [];
  // The head's ranges came with the branch read; another parent's are read here.
  const ranges = !parent.line_id
    ? []
    : (parentRanges ?? (await transcriptRepository.lineageRanges(db, parent)));
  const clipped = ranges
    .map((r) => ({ ...r, hi: Math.min(r.hi, parent.floor_no) }))
    .filter((r) => r.lo <= r.hi);
  if (clipped.length > 0 && Math.min(...clipped.map((r) => r.lo)) === 0) {
    if (historyRev === null || parent.state !== 'committed')
      return turnHistoryRepository.activeMessages(db, clipped);
    return historyCache.history(sessionId, historyRev, clipped, (missing) =>
      turnHistoryRepository.activeMessages(db, missing),
    );
  }
  return (await readBranchHistory(db, branch, { uptoFloorNo: parent.floor_no })).messages;
}

/** Committed floors' messages of recent sessions: at most 32 million characters of content. */
const historyCache = new TurnHistoryCache(32_000_000);

/**
 * A respond's floor, just committed, for the history cache: its input and output messages as the
 * history read returns them (input page first), under the revision the turn read.
 */
export function rememberCommittedFloor(
  sessionId: string,
  revision: string | null,
  floor: Pick<FloorRow, 'line_id' | 'floor_no'>,
  messages: Array<
    Pick<MessageRow, 'id' | 'role' | 'content' | 'is_hidden' | 'token_count' | 'token_encoding'>
  >,
): void {
  if (revision === null || !floor.line_id) return;
  historyCache.addFloor(
    sessionId,
    revision,
    floor.line_id,
    floor.floor_no,
    messages.map((m) => ({
      line_id: floor.line_id,
      floor_no: floor.floor_no,
      message_id: m.id,
      role: m.role,
      content: m.content,
      is_hidden: m.is_hidden,
      token_count: m.token_count,
      token_encoding: m.token_encoding,
    })),
  );
}

type HistoryColumns =
  'floor_no' | 'message_id' | 'role' | 'content' | 'is_hidden' | 'token_count' | 'token_encoding';

/**
 * Normalised entries of worldbook versions, by `(id, version, updated_at)`: every write bumps the version
 * (and `updated_at`), so a key never names two contents and a stale entry is simply never asked for
 * again; any replica may cache. Bounded by total entries (least recently used out). The same array is
 * handed to the engine on every turn, so its per-book preparation (a WeakMap on the array) is reused.
 */
class EntriesCache {
  private readonly map = new Map<string, NormalizedWorldbookEntry[]>();
  private size = 0;
  constructor(private readonly maxEntries: number) {}

  get(key: string): NormalizedWorldbookEntry[] | undefined {
    const value = this.map.get(key);
    if (value) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: NormalizedWorldbookEntry[]): void {
    if (value.length > this.maxEntries) return;
    this.map.set(key, value);
    this.size += value.length;
    for (const [oldest, entries] of this.map) {
      if (this.size <= this.maxEntries) break;
      this.map.delete(oldest);
      this.size -= entries.length;
    }
  }
}

const bookEntriesCache = new EntriesCache(50_000);

async function loadWorldbooks(
  db: Executor,
  session: SessionRow,
  warnings: TurnContextWarning[],
): Promise<PromptEngineInput['lorebooks']> {
  const ids = Array.isArray(session.worldbook_ids) ? (session.worldbook_ids as string[]) : [];
  const books = await Promise.all(
    ids.map(async (id) => {
      const book = await worldbooksRepository.findOfAccount(db, session.account_id, id);
      if (!book) {
        warnings.push({
          code: 'worldbook_unavailable',
          message: 'A worldbook bound to the session is not available; it is skipped',
          worldbook_id: id,
        });
        return null;
      }
      const key = `${book.id}\n${book.version}\n${book.updated_at}`;
      let entries = bookEntriesCache.get(key);
      if (!entries) {
        entries = (await worldbooksRepository.allEntries(db, book.id)).map(rowToNormalized);
        bookEntriesCache.set(key, entries);
      }
      return {
        id: book.id,
        name: book.name,
        source: 'global' as const,
        version: book.version,
        updated_at: book.updated_at,
        entries,
        defaults: worldbookDefaults(book.extra),
      };
    }),
  );
  return books.filter((b): b is NonNullable<typeof b> => b !== null);
}

/**
 * The book-level match settings of a worldbook payload (spec 3 global fields `scanDepth`, `caseSensitive`,
 * `matchWholeWords`), which win over the session's lorebook settings; null when the book sets none.
 * `recursive` and `maxRecursionSteps` are scan-wide in ST and stay session settings.
 */
function worldbookDefaults(extra: unknown): PromptEngineInput['lorebooks'][number]['defaults'] {
  if (!isPlainObject(extra)) return null;
  const e = extra as Record<string, unknown>;
  const defaults: NonNullable<PromptEngineInput['lorebooks'][number]['defaults']> = {};
  if (typeof e.scanDepth === 'number' && Number.isInteger(e.scanDepth) && e.scanDepth >= 0)
    defaults.scanDepth = e.scanDepth;
  if (typeof e.caseSensitive === 'boolean') defaults.caseSensitive = e.caseSensitive;
  if (typeof e.matchWholeWords === 'boolean') defaults.matchWholeWords = e.matchWholeWords;
  return Object.keys(defaults).length > 0 ? defaults : null;
}

/** The world a card links to (`extensions.world`, ST's character lorebook name), or null. */
function linkedWorldName(card: Record<string, unknown> | null): string | null {
  const extensions = card?.extensions;
  if (!isPlainObject(extensions)) return null;
  const world = (extensions as Record<string, unknown>).world;
  return typeof world === 'string' && world ? world : null;
}

/** `extensions.regex_scripts` of a preset or card (ST's scoped scripts), objects only. */
function embeddedRegexScripts(owner: unknown): Array<Record<string, unknown>> {
  if (!isPlainObject(owner)) return [];
  const extensions = (owner as Record<string, unknown>).extensions;
  if (!isPlainObject(extensions)) return [];
  const scripts = (extensions as Record<string, unknown>).regex_scripts;
  return Array.isArray(scripts) ? scripts.filter((s): s is Record<string, unknown> => isPlainObject(s)) : [];
}

type HistoryEntry = PromptEngineInput['history'][number];

/**
 * Each stored message's engine entry, remembered per row object with the names and encoding it was
 * built for. The rows of the history cache are the same objects on every turn of a session, so a
 * chat's entries are built once and a turn only builds those of its new floors; rows read straight
 * from the database are new objects and get new entries. Frozen: turns share them, and the engine
 * only reads its input.
 */
const entriesOfRows = new WeakMap<object, { names: string; entry: HistoryEntry }>();

/** Makes an entry's `token_count` a getter that counts its content in `encoding` on first read. */
function countOnRead(entry: HistoryEntry, encoding: TokenEncoding): void {
  let counted: number | undefined;
  Object.defineProperty(entry, 'token_count', {
    enumerable: true,
    get: () => (counted ??= tokenCounter(encoding).count(entry.content)),
  });
}

/**
 * The stored history messages as the engine's history entries (tool messages never reach the prompt);
 * a plain loop, as it runs over every message of the chat on every turn.
 */
export function historyEntries(
  rows: Array<Pick<LineageMessageRow, HistoryColumns>>,
  names: { user: string; char: string; encoding: string },
): PromptEngineInput['history'] {
  const key = `${names.user}\u0000${names.char}\u0000${names.encoding}`;
  const entries: PromptEngineInput['history'] = [];
  for (const m of rows) {
    if (m.role === 'tool') continue;
    const known = entriesOfRows.get(m);
    if (known !== undefined && known.names === key) {
      entries.push(known.entry);
      continue;
    }
    const narrator = m.role === 'narrator' || m.role === 'system';
    const entry: HistoryEntry = {
      floor_no: m.floor_no,
      role: m.role === 'user' ? 'user' : narrator ? 'system' : 'assistant',
      name: m.role === 'user' ? names.user : narrator ? 'System' : names.char,
      content: m.content,
      token_count: m.token_encoding === names.encoding ? m.token_count : null,
      is_hidden: m.is_hidden,
      is_narrator: narrator,
      message_id: m.message_id,
    };
    // Stored in another encoding than the model's (o200k rows, a GPT-4 model): counted once, when the
    // engine first asks, and kept with the entry, so a chat's later turns do not count it again.
    if (entry.token_count === null) countOnRead(entry, names.encoding as TokenEncoding);
    Object.freeze(entry);
    entriesOfRows.set(m, { names: key, entry });
    entries.push(entry);
  }
  return entries;
}
