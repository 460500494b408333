import { ID_PREFIX, newId } from '@hearth/domain';
import {
  accountsRepository,
  llmProfilesRepository,
  projectSettingsRepository,
  projectsRepository,
  type LlmProfileRow,
  type ProjectRow,
} from '@hearth/persistence';
import type { TestApp } from '../test-app';
import { projectEventRows, projectLogRows } from './derived-outputs';

export interface LlmProfileOptions {
  preset_name?: string;
  provider?: LlmProfileRow['provider'];
  model_id?: string;
  base_url?: string | null;
  status?: LlmProfileRow['status'];
}

/**
 * An LLM profile row of the account, in its default Workspace (the profile routes are issue 6). The
 * ciphertext is a placeholder: nothing here decrypts it.
 */
export async function createLlmProfile(
  t: TestApp,
  accountId: string,
  options: LlmProfileOptions = {},
): Promise<LlmProfileRow> {
  const db = t.resources.database.db;
  const workspace = await accountsRepository.findDefaultWorkspace(db, accountId);
  if (!workspace) throw new Error(`account ${accountId} has no default Workspace`);
  const now = Date.now();
  const status = options.status ?? 'active';
  return llmProfilesRepository.insert(db, {
    id: newId(ID_PREFIX.llmProfile),
    account_id: accountId,
    workspace_id: workspace.id,
    preset_name: options.preset_name ?? 'Factory profile',
    provider: options.provider ?? 'openai',
    model_id: options.model_id ?? 'gpt-factory',
    base_url: options.base_url ?? null,
    api_key_name: null,
    api_key_ciphertext: 'factory:not-a-real-ciphertext',
    api_key_masked: 'sk-...abcd',
    status,
    last_used_at: null,
    deleted_at: status === 'deleted' ? now : null,
    created_at: now,
    updated_at: now,
  });
}

/** Changes a profile's status (the profile routes are issue 6). */
export async function setLlmProfileStatus(
  t: TestApp,
  id: string,
  status: LlmProfileRow['status'],
): Promise<void> {
  await llmProfilesRepository.setStatus(t.resources.database.db, id, status);
}

/** Creates an MCP server through the API with the caller's key; returns its JSON. */
export async function createMcpServer(
  t: TestApp,
  apiKey: string,
  body: { name?: string; url?: string; tools?: string[]; status?: 'enabled' | 'disabled' } = {},
): Promise<{ id: string; tools: string[]; name: string }> {
  const res = await t.http
    .post('/mcp-servers')
    .set('x-api-key', apiKey)
    .send({
      name: body.name ?? `server-${newId('x')}`,
      url: body.url ?? 'https://mcp.example.com/sse',
      ...body,
    });
  if (res.status !== 201)
    throw new Error(`POST /mcp-servers answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Creates a tool policy through the API with the caller's key; returns its JSON. */
export async function createToolPolicy(
  t: TestApp,
  apiKey: string,
  body: { name?: string; policy_json?: unknown; status?: 'active' | 'archived' } = {},
): Promise<{ id: string; name: string }> {
  const res = await t.http
    .post('/tool-policies')
    .set('x-api-key', apiKey)
    .send({
      name: body.name ?? `policy-${newId('x')}`,
      policy_json: body.policy_json ?? { mode: 'deny', tools: [] },
      ...body,
    });
  if (res.status !== 201)
    throw new Error(`POST /tool-policies answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Everything a settings write touches, to show that a refused PUT changed nothing. */
export async function settingsJournal(t: TestApp, project: Pick<ProjectRow, 'id' | 'account_id'>) {
  const db = t.resources.database.db;
  const row = await projectsRepository.findProject(db, project.id);
  if (!row) throw new Error(`Project ${project.id} not found`);
  return {
    llm: (await projectSettingsRepository.findLlmOverride(db, project.id)) ?? null,
    bindings: await projectSettingsRepository.listMcpBindings(db, project.id),
    policies: await projectSettingsRepository.listToolPolicyOverrides(db, project.id),
    settingsOverride: row.settings_override,
    events: (await projectEventRows(t, project.id)).length,
    logs: (await projectLogRows(t, project)).length,
  };
}
