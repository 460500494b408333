import { validationError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { sessionsRepository, type Executor, type SessionRow, type Tx } from '@hearth/persistence';
import { sessionScopeNotFound, type BindingScope } from './llm-profile-rules';

export interface ScopeInput {
  scope?: BindingScope;
  session_id?: string | null;
}

export interface ResolvedScope {
  scope: BindingScope;
  scopeId: string;
  session: SessionRow | null;
}

/** Checks the scope/session_id pair of a body or query (400 `validation_error`), before any lookup. */
export function checkScopeInput(input: ScopeInput): BindingScope {
  const scope = input.scope ?? 'global';
  if (scope === 'session' && !input.session_id)
    throw validationError('session_id is required when scope is session', {
      fields: [{ field: 'session_id', problems: ['is required when scope is session'] }],
    });
  if (scope === 'global' && input.session_id != null)
    throw validationError('session_id is only accepted with scope session', {
      fields: [{ field: 'session_id', problems: ['is only accepted with scope session'] }],
    });
  return scope;
}

/**
 * A session the account's profile bindings may name: one of the caller's account. A missing session or
 * one of another account answers 404 `session_scope_not_found`.
 */
export async function requireScopeSession(
  db: Executor,
  actor: Actor,
  sessionId: string,
): Promise<SessionRow> {
  const session = await sessionsRepository.findSession(db, sessionId);
  if (!session || session.account_id !== actor.accountId) throw sessionScopeNotFound();
  return session;
}

/**
 * The scope a binding write names, inside its transaction: a session scope's session is key-share
 * locked, so a concurrent session delete either comes first (404 `session_scope_not_found`) or waits
 * for the write (whose binding it then removes with the session).
 */
export async function resolveScope(tx: Tx, actor: Actor, input: ScopeInput): Promise<ResolvedScope> {
  const scope = checkScopeInput(input);
  if (scope === 'global') return { scope, scopeId: 'global', session: null };
  const session = await sessionsRepository.findSessionForKeyShare(tx, input.session_id!);
  if (!session || session.account_id !== actor.accountId) throw sessionScopeNotFound();
  return { scope, scopeId: session.id, session };
}
