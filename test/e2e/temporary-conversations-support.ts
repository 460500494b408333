import { CreateTemporaryConversationUseCase } from '@hearth/app';
import { temporaryConversationsRepository, type TemporaryConversationRow } from '@hearth/persistence';
import { accountActor } from '../support/factories/accounts';
import { defaultCaller, type Caller } from '../support/factories/members';
import { ADMIN_KEY, type TestApp } from '../support/test-app';

/** Shared helpers of the temporary conversation suites (test/e2e/temporary-conversations*.test.ts). */

export interface TemporaryJson {
  id: string;
  status: string;
  retention_policy: string;
  visibility: string;
  source_session_id: string | null;
  project_id: string;
  expires_at: number | null;
  created_at: number;
  cleaned_at: number | null;
  [field: string]: unknown;
}

export async function createTemporary(
  t: TestApp,
  from: { sessionId: string } | { projectId: string },
  body: Record<string, unknown> = {},
  apiKey = ADMIN_KEY,
): Promise<TemporaryJson> {
  const path =
    'sessionId' in from
      ? `/sessions/${from.sessionId}/temporary-conversations`
      : `/projects/${from.projectId}/temporary-conversations`;
  const res = await t.http.post(path).set('x-api-key', apiKey).send(body);
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
  return res.body.data as TemporaryJson;
}

export async function appendMessage(
  t: TestApp,
  id: string,
  role: string,
  content: string,
  apiKey = ADMIN_KEY,
): Promise<{ floor_id: string; page_id: string; message_id: string }> {
  const res = await t.http
    .post(`/temporary-conversations/${id}/messages`)
    .set('x-api-key', apiKey)
    .send({ role, content });
  if (res.status !== 200) throw new Error(`messages answered ${res.status}: ${res.text}`);
  return res.body.data;
}

/** An `internal` (agent-made) conversation, through the app layer (no HTTP route makes one). */
export async function createInternalTemporary(
  t: TestApp,
  source: { session_id: string } | { project_id: string },
  agentOrigin: Record<string, unknown> | null = { agent_type_id: 'agt_x', job_id: 'job_x' },
): Promise<TemporaryConversationRow> {
  const caller: Caller = await defaultCaller(t, ADMIN_KEY);
  return t.app
    .get(CreateTemporaryConversationUseCase, { strict: false })
    .internal(accountActor(caller, 'admin'), { source, agent_origin: agentOrigin });
}

export function conversationRow(t: TestApp, id: string) {
  return temporaryConversationsRepository.find(t.resources.database.db, id);
}

/** Moves a ttl conversation's expiry into the past (as if its time had run out). */
export async function expireNow(t: TestApp, id: string): Promise<void> {
  await t.resources.database.db
    .updateTable('temporary_conversations')
    .set({ expires_at: Date.now() - 1000 })
    .where('session_id', '=', id)
    .execute();
}

export async function operationLogsOf(t: TestApp, sessionId: string) {
  return t.resources.database.db
    .selectFrom('operation_logs')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
