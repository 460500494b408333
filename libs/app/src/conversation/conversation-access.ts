import { notFound } from '@hearth/domain';
import type { Actor, ProjectAccess, ProjectCapability } from '@hearth/permissions';
import {
  conversationRepository,
  floorsRepository,
  sessionsRepository,
  type BranchRow,
  type Executor,
  type FloorRow,
  type PageRow,
  type SessionKind,
  type Tx,
} from '@hearth/persistence';
import { ensureProjectActive } from '../projects/project-guards';
import type { SessionGrant } from '../sessions/session-access';
import { branchNotFound, floorNotFound, pageNotFound, sessionArchived } from './conversation-errors';
import { MAIN_BRANCH } from './session-conversation';

export interface FloorGrant extends SessionGrant {
  floor: FloorRow;
}

export interface PageGrant extends FloorGrant {
  page: PageRow;
}

/**
 * A floor the caller may act on with `capability` in its session's Project. A missing floor and a floor
 * of a session outside the caller's Projects both answer 404 `floor_not_found` (never 403, never its
 * data); a member lacking the capability gets 403 `project_access_denied`. With `lock` the floor row
 * stays locked until the transaction ends.
 */
export async function requireFloor(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  floorId: string,
  capability: ProjectCapability,
  /**
   * `sessionKind` `temporary`: a temporary conversation's floor (its own routes only).
   * `notFoundMessage`: the message of the route's own 404 for a missing object (default `Floor not found`),
   * given to every 404 here so a foreign floor's answer is the same as a missing one's.
   */
  options: {
    lock?: boolean;
    notFoundCode?: string;
    notFoundMessage?: string;
    sessionKind?: SessionKind;
  } = {},
): Promise<FloorGrant> {
  const floor = options.lock
    ? await conversationRepository.lockFloor(db as Tx, floorId)
    : await conversationRepository.findFloor(db, floorId);
  const code = options.notFoundCode ?? 'floor_not_found';
  const message = options.notFoundMessage ?? floorNotFound().message;
  if (!floor) throw notFound(code, message);
  return {
    floor,
    ...(await grantOfSession(
      access,
      db,
      actor,
      floor.session_id,
      capability,
      code,
      message,
      options.sessionKind,
    )),
  };
}

/** A page the caller may act on, with its floor (locked with `lock`); 404 `page_not_found` otherwise. */
export async function requirePage(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  pageId: string,
  capability: ProjectCapability,
  options: { lock?: boolean } = {},
): Promise<PageGrant> {
  const page = await floorsRepository.findPage(db, pageId);
  if (!page) throw pageNotFound();
  const grant = await grantOfSession(
    access,
    db,
    actor,
    page.session_id,
    capability,
    'page_not_found',
    pageNotFound().message,
  );
  const floor = options.lock
    ? await conversationRepository.lockFloor(db as Tx, page.floor_id)
    : await conversationRepository.findFloor(db, page.floor_id);
  if (!floor) throw pageNotFound();
  return { ...grant, floor, page };
}

/**
 * A branch of the session, or 404 `branch_not_found` (unknown id, or a branch of another session).
 * `main` also names the session's default branch (spec 2: branches default `main`), as in a turn's
 * `branch_id`.
 */
export async function requireBranchOfSession(
  db: Executor,
  sessionId: string,
  requested: string,
  options: { lock?: boolean } = {},
): Promise<BranchRow> {
  const main =
    requested === MAIN_BRANCH
      ? await conversationRepository.findBranchByName(db, sessionId, MAIN_BRANCH)
      : undefined;
  const branchId = main?.id ?? requested;
  const branch = options.lock
    ? await conversationRepository.lockBranch(db as Tx, branchId)
    : await conversationRepository.findBranchOfSession(db, sessionId, branchId);
  if (!branch || branch.session_id !== sessionId) throw branchNotFound();
  return branch;
}

/** Writes need an active Project (409 `project_archived`) and an active session (409 `session_archived`). */
export function ensureConversationWritable(grant: SessionGrant): void {
  ensureProjectActive(grant.project);
  if (grant.session.status === 'archived') throw sessionArchived(grant.session.id);
}

/**
 * The session of a floor or page and the caller's grant on its Project. Every 404 (session gone, not a
 * member) has the code and message of the route's missing object, so it reveals nothing (R8).
 */
async function grantOfSession(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  sessionId: string,
  capability: ProjectCapability,
  notFoundCode: string,
  notFoundMessage: string,
  kind: SessionKind = 'standard',
): Promise<SessionGrant> {
  const session = await sessionsRepository.findSession(db, sessionId, kind);
  if (!session) throw notFound(notFoundCode, notFoundMessage);
  const { project, role } = await access.require(actor, session.project_id, capability, {
    db,
    notFoundCode,
    notFoundMessage,
  });
  return { session, project, role };
}
