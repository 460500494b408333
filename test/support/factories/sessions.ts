import { sessionsRepository, type SessionRow } from '@hearth/persistence';
import { ADMIN_KEY, type TestApp } from '../test-app';

/** The session object of the API (`{data: Session}`); it has no workspace_id or project_id. */
export interface SessionJson {
  id: string;
  title: string;
  status: 'active' | 'archived';
  [field: string]: unknown;
}

export interface CreatedSession {
  id: string;
  /** The Project the session was placed in (read from the database; the API hides it). */
  projectId: string;
  workspaceId: string;
  body: SessionJson;
}

/**
 * Creates a session through `POST /sessions` and expects 201. Without `project_id` in the body the
 * session gets its own `session_default` Project in the caller's default Workspace.
 */
export async function createSession(
  t: TestApp,
  options: { apiKey?: string; body?: Record<string, unknown> } = {},
): Promise<CreatedSession> {
  const res = await t.http
    .post('/sessions')
    .set('x-api-key', options.apiKey ?? ADMIN_KEY)
    .send(options.body ?? {});
  if (res.status !== 201)
    throw new Error(`POST /sessions answered ${res.status}: ${JSON.stringify(res.body)}`);
  const body = res.body.data as SessionJson;
  const row = await findSessionRow(t, body.id);
  if (!row) throw new Error('created session not found in the database');
  return { id: body.id, projectId: row.project_id, workspaceId: row.workspace_id, body };
}

/** A session placed in a given Project (the caller must be able to write sessions there). */
export const createSessionInProject = (
  t: TestApp,
  projectId: string,
  options: { apiKey?: string; body?: Record<string, unknown> } = {},
) => createSession(t, { ...options, body: { ...options.body, project_id: projectId } });

export async function findSessionRow(t: TestApp, id: string): Promise<SessionRow | undefined> {
  return sessionsRepository.findSession(t.resources.database.db, id);
}
