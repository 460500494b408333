import { ID_PREFIX, newId } from '@hearth/domain';
import {
  assetVersionsRepository,
  charactersRepository,
  conversationRepository,
  type BranchRow,
  type Executor,
  type FloorRow,
  type SessionRow,
  type Tx,
  variablesRepository,
} from '@hearth/persistence';
import { FLOOR_LINE_PREFIX } from './floor-writes';
import { writePage, type MessageInput } from './message-writes';

export const MAIN_BRANCH = 'main';

/**
 * The session's `main` branch. Sessions made since issue 5 get it at creation; older ones get it here
 * on first use (an idempotent insert: concurrent first uses agree on one row).
 */
export async function ensureMainBranch(
  db: Executor,
  session: Pick<SessionRow, 'id' | 'account_id'>,
): Promise<BranchRow> {
  const existing = await conversationRepository.findBranchByName(db, session.id, MAIN_BRANCH);
  if (existing) return existing;
  const now = Date.now();
  const inserted = await conversationRepository.insertBranchIfAbsent(db, {
    id: newId(ID_PREFIX.branch),
    account_id: session.account_id,
    session_id: session.id,
    name: MAIN_BRANCH,
    source_floor_id: null,
    head_floor_id: null,
    created_at: now,
    updated_at: now,
  });
  if (inserted) return inserted;
  const raced = await conversationRepository.findBranchByName(db, session.id, MAIN_BRANCH);
  if (!raced) throw new Error(`session ${session.id} has no main branch after insert`);
  return raced;
}

export interface SessionConversationStart {
  branch: BranchRow;
  /** Floor 0 with the greeting pages, when the session's character has a first message. */
  greetingFloor: FloorRow | null;
}

/**
 * Everything a new session's conversation starts with, inside the session's transaction: the `main`
 * branch and, with `greeting`, the greeting floor (floor 0, committed) made from the bound character
 * version: one `greeting` page per greeting, the first message active and each alternate greeting an
 * inactive page (a swipe), each with one assistant message holding the raw text (macros unexpanded).
 * Called by `POST /sessions` and by the character import that creates a session.
 */
export async function startSessionConversation(
  tx: Tx,
  session: SessionRow,
  options: { greeting: boolean },
): Promise<SessionConversationStart> {
  const now = session.created_at;
  const branch = await conversationRepository.insertBranch(tx, {
    id: newId(ID_PREFIX.branch),
    account_id: session.account_id,
    session_id: session.id,
    name: MAIN_BRANCH,
    source_floor_id: null,
    head_floor_id: null,
    created_at: now,
    updated_at: now,
  });
  if (!options.greeting) return { branch, greetingFloor: null };
  const greetings = await characterGreetings(tx, session);
  if (greetings.length === 0) return { branch, greetingFloor: null };

  const floor = await conversationRepository.insertFloor(
    tx,
    null,
    {
      id: newId(ID_PREFIX.floor),
      account_id: session.account_id,
      session_id: session.id,
      branch_id: branch.id,
      state: 'committed',
      token_in: 0,
      token_out: 0,
      reasoning_text: null,
      metadata: JSON.stringify({ kind: 'greeting' }),
      superseded_at: null,
      superseded_by_floor_id: null,
      state_snapshot: null,
      created_at: now,
      updated_at: now,
    },
    newId(FLOOR_LINE_PREFIX),
  );
  for (const [index, text] of greetings.entries()) {
    const message: MessageInput = { role: 'assistant', content: text, source: 'character_greeting' };
    await writePage(tx, floor, 'greeting', [message], { active: index === 0, now });
  }
  // The greeting's local variable view (a new session has none), stored like a turn's
  // (`snapshotLocalView`): what a preview on a branch made from it starts with.
  await variablesRepository.upsertSnapshot(tx, {
    floor_id: floor.id,
    account_id: floor.account_id,
    session_id: floor.session_id,
    branch_id: floor.branch_id,
    local_view: JSON.stringify({}),
    created_at: now,
    updated_at: now,
  });
  const moved = await conversationRepository.moveBranchHead(tx, branch.id, null, floor.id, now);
  return { branch: moved ?? branch, greetingFloor: floor };
}

/**
 * The greetings of the session's character version (`character_version_id`, else the latest version
 * of `character_id`), first message first. None when no version of the account is found, or when the
 * first message is empty (SillyTavern then shows no greeting); empty alternate greetings are skipped.
 */
async function characterGreetings(db: Executor, session: SessionRow): Promise<string[]> {
  let versionId = session.character_version_id;
  if (!versionId && session.character_id) {
    const character = await charactersRepository.findOfAccount(db, session.account_id, session.character_id);
    versionId = character && character.deleted_at === null ? character.latest_version_id : null;
  }
  if (!versionId) return [];
  const version = await assetVersionsRepository.findOfAccount(db, session.account_id, versionId, 'character');
  if (!version) return [];
  const data = cardData(version.payload);
  const first = data.first_mes;
  if (typeof first !== 'string' || first.trim() === '') return [];
  const alternates = Array.isArray(data.alternate_greetings) ? data.alternate_greetings : [];
  return [first, ...alternates.filter((g): g is string => typeof g === 'string' && g.trim() !== '')];
}

function cardData(payload: unknown): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null) return {};
  const data = (payload as { data?: unknown }).data;
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
}
