import { DomainError } from '@hearth/domain';
import type { Actor, ProjectAccess, ProjectCapability, ProjectRole } from '@hearth/permissions';
import {
  sessionsRepository,
  type Executor,
  type ProjectRow,
  type SessionRow,
  type Tx,
} from '@hearth/persistence';

export interface SessionGrant {
  session: SessionRow;
  project: ProjectRow;
  role: ProjectRole;
}

const sessionNotFound = () => new DomainError('not_found', 404, 'Session not found');

/**
 * Sessions are legacy resource routes (spec 1 "Authentication"): a missing session and a session of a
 * Project the caller is not a member of both answer 404 `not_found`; a member whose role lacks the
 * capability gets 403 `project_access_denied`. With `lock`, the session row stays locked until the
 * transaction ends.
 */
export async function requireSession(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  sessionId: string,
  capability: ProjectCapability,
  options: { lock?: boolean } = {},
): Promise<SessionGrant> {
  const session = options.lock
    ? await sessionsRepository.findSessionForUpdate(db as Tx, sessionId)
    : await sessionsRepository.findSession(db, sessionId);
  if (!session) throw sessionNotFound();
  const { project, role } = await access.require(actor, session.project_id, capability, {
    db,
    notFoundCode: 'not_found',
    notFoundMessage: sessionNotFound().message,
  });
  return { session, project, role };
}

/** The fields an operation log keeps of a session (references only, no bodies). */
export function sessionRef(session: SessionRow): Record<string, unknown> {
  return {
    title: session.title,
    status: session.status,
    character_id: session.character_id,
    character_version_id: session.character_version_id,
    user_card_id: session.user_card_id,
    preset_id: session.preset_id,
    worldbook_ids: session.worldbook_ids,
    regex_profile_id: session.regex_profile_id,
  };
}

/** The binding ids a session stores as given (issue 3 validates them against the library). */
export interface SessionBindingsInput {
  character_id?: string | null;
  character_version_id?: string | null;
  user_card_id?: string | null;
  preset_id?: string | null;
  worldbook_ids?: string[];
  regex_profile_id?: string | null;
}

export const BINDING_FIELDS = [
  'character_id',
  'character_version_id',
  'user_card_id',
  'preset_id',
  'regex_profile_id',
] as const satisfies ReadonlyArray<keyof SessionBindingsInput>;
