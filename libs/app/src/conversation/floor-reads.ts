import {
  conversationRepository,
  transcriptRepository,
  type BranchRow,
  type Executor,
  type FloorRow,
  type LineageMessageRow,
  type LineRange,
  type MessageRow,
  type PageRow,
} from '@hearth/persistence';

export interface PageWithMessagesView {
  page: PageRow;
  messages: MessageRow[];
}

/** A floor with all its pages (active and not), each with its messages in `seq` order. */
export interface FloorWithPages {
  floor: FloorRow;
  pages: PageWithMessagesView[];
}

/** Pages and messages of the floors, in three queries whatever the number of floors. */
export async function loadFloorsWithPages(db: Executor, floors: FloorRow[]): Promise<FloorWithPages[]> {
  const ids = floors.map((f) => f.id);
  const [pages, messages] = await Promise.all([
    transcriptRepository.pagesOfFloors(db, ids),
    transcriptRepository.messagesOfFloors(db, ids),
  ]);
  const messagesByPage = new Map<string, MessageRow[]>();
  for (const m of messages) {
    const list = messagesByPage.get(m.page_id);
    if (list) list.push(m);
    else messagesByPage.set(m.page_id, [m]);
  }
  const pagesByFloor = new Map<string, PageWithMessagesView[]>();
  for (const page of pages) {
    const entry = { page, messages: messagesByPage.get(page.id) ?? [] };
    const list = pagesByFloor.get(page.floor_id);
    if (list) list.push(entry);
    else pagesByFloor.set(page.floor_id, [entry]);
  }
  return floors.map((floor) => ({ floor, pages: pagesByFloor.get(floor.id) ?? [] }));
}

/**
 * How to read the lineage ending at `head`: its line ranges, and, when the oldest line does not start
 * at floor 0 (it continues from floors written before lines, e.g. by test factories) or the head has
 * no line, the floor to walk up from by `parent_floor_id` for the floor numbers up to `legacyTo`.
 */
interface LineagePlan {
  ranges: LineRange[];
  legacyHeadId: string | null;
  legacyTo: number;
}

async function lineagePlan(db: Executor, head: FloorRow): Promise<LineagePlan> {
  if (!head.line_id) return { ranges: [], legacyHeadId: head.id, legacyTo: head.floor_no };
  const ranges = await transcriptRepository.lineageRanges(db, head);
  const root = ranges.reduce<LineRange | null>((min, r) => (min === null || r.lo < min.lo ? r : min), null);
  if (!root || root.lo === 0) return { ranges, legacyHeadId: null, legacyTo: -1 };
  const [first] = await transcriptRepository.floorsInRanges(db, [root], root.lo, root.lo);
  return { ranges, legacyHeadId: first?.parent_floor_id ?? null, legacyTo: root.lo - 1 };
}

async function planFloors(db: Executor, plan: LineagePlan, lo: number, hi: number): Promise<FloorRow[]> {
  const legacy =
    plan.legacyHeadId && lo <= plan.legacyTo
      ? await transcriptRepository.floorsByParentWalk(db, plan.legacyHeadId, lo, Math.min(hi, plan.legacyTo))
      : [];
  const lined =
    plan.ranges.length > 0 ? await transcriptRepository.floorsInRanges(db, plan.ranges, lo, hi) : [];
  return [...legacy, ...lined];
}

/** The floors of the lineage ending at `head` with floor_no in [from, to], ascending. */
export async function lineageFloors(
  db: Executor,
  head: FloorRow,
  from: number,
  to: number,
): Promise<FloorRow[]> {
  const lo = Math.max(0, from);
  const hi = Math.min(head.floor_no, to);
  if (lo > hi) return [];
  return planFloors(db, await lineagePlan(db, head), lo, hi);
}

/** Whether `floor` is in the lineage ending at `head` (the lineage's floor at its floor_no is it). */
export async function isInLineage(db: Executor, head: FloorRow, floor: FloorRow): Promise<boolean> {
  if (floor.id === head.id) return true;
  if (floor.floor_no > head.floor_no) return false;
  const [found] = await lineageFloors(db, head, floor.floor_no, floor.floor_no);
  return found?.id === floor.id;
}

export interface TranscriptWindow {
  after_floor_no?: number;
  before_floor_no?: number;
  limit: number;
}

/**
 * The floor numbers a transcript page covers in a lineage of `headFloorNo + 1` floors (one per
 * floor_no, 0..head). Without a bound: the first `limit`. `after_floor_no` pages forward from just after
 * it; `before_floor_no` alone gives the `limit` floors just below it. With both, the first `limit`
 * floors strictly between them. `has_more` says whether floors remain in that direction.
 */
export function transcriptWindow(
  headFloorNo: number | null,
  window: TranscriptWindow,
): { from: number; to: number; has_more: boolean } {
  if (headFloorNo === null) return { from: 0, to: -1, has_more: false };
  const lo = window.after_floor_no === undefined ? 0 : window.after_floor_no + 1;
  const hi =
    window.before_floor_no === undefined ? headFloorNo : Math.min(headFloorNo, window.before_floor_no - 1);
  if (lo > hi) return { from: lo, to: lo - 1, has_more: false };
  if (window.before_floor_no !== undefined && window.after_floor_no === undefined) {
    const from = Math.max(lo, hi - window.limit + 1);
    return { from, to: hi, has_more: from > lo };
  }
  const to = Math.min(hi, lo + window.limit - 1);
  return { from: lo, to, has_more: to < hi };
}

export interface BranchHistory {
  branch: BranchRow;
  /** The floor the history ends at (the branch head, or `uptoFloorNo`'s floor); null when empty. */
  head: FloorRow | null;
  /** The active pages' messages of every floor, oldest first, with stored token counts. */
  messages: LineageMessageRow[];
}

/**
 * A branch's history for prompt assembly: its lineage from floor 0 (or `fromFloorNo`, for a windowed
 * history) to the head (or to `uptoFloorNo`, e.g. the floor before one being retried), the active pages'
 * messages only, oldest first, input before output. Hidden messages are included (flagged); the prompt
 * engine leaves them out.
 */
export async function readBranchHistory(
  db: Executor,
  branch: BranchRow,
  options: { fromFloorNo?: number; uptoFloorNo?: number } = {},
): Promise<BranchHistory> {
  const head = branch.head_floor_id
    ? await conversationRepository.findFloor(db, branch.head_floor_id)
    : undefined;
  if (!head) return { branch, head: null, messages: [] };
  const to = Math.min(head.floor_no, options.uptoFloorNo ?? head.floor_no);
  if (to < 0) return { branch, head: null, messages: [] };
  const from = Math.max(0, options.fromFloorNo ?? 0);
  const plan = await lineagePlan(db, head);
  if (plan.legacyHeadId) {
    const floors = await planFloors(db, plan, from, to);
    const messages = (await loadFloorsWithPages(db, floors)).flatMap(activeMessagesOf);
    const last = to === head.floor_no ? head : ((await planFloors(db, plan, to, to))[0] ?? null);
    return { branch, head: last, messages };
  }
  const messages = await transcriptRepository.activeMessagesInRanges(db, plan.ranges, from, to);
  const last =
    to === head.floor_no
      ? head
      : ((await transcriptRepository.floorsInRanges(db, plan.ranges, to, to))[0] ?? null);
  return { branch, head: last, messages };
}

const KIND_ORDER: Record<PageRow['page_kind'], number> = { input: 0, greeting: 1, output: 2 };

function activeMessagesOf({ floor, pages }: FloorWithPages): LineageMessageRow[] {
  return pages
    .filter((p) => p.page.is_active)
    .sort(
      (a, b) =>
        KIND_ORDER[a.page.page_kind] - KIND_ORDER[b.page.page_kind] || a.page.page_no - b.page.page_no,
    )
    .flatMap(({ page, messages }) =>
      messages.map((m) => ({
        floor_id: floor.id,
        floor_no: floor.floor_no,
        floor_state: floor.state,
        page_id: page.id,
        page_kind: page.page_kind,
        message_id: m.id,
        seq: m.seq,
        role: m.role,
        content: m.content,
        content_format: m.content_format,
        is_hidden: m.is_hidden,
        source: m.source,
        token_count: m.token_count,
        token_encoding: m.token_encoding,
      })),
    );
}
