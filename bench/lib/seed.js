'use strict';
// Bench fixtures written with the built repositories and query builder (the schema of the built
// migrations), on the bench database only.
const dist = require('./dist');

async function defaultAccount(db) {
  const account = await db
    .selectFrom('accounts')
    .selectAll()
    .where('is_default', '=', true)
    .executeTakeFirstOrThrow();
  const workspace = await db
    .selectFrom('workspaces')
    .selectAll()
    .where('account_id', '=', account.id)
    .where('is_default', '=', true)
    .executeTakeFirstOrThrow();
  return { account, workspace };
}

/** `count` manual Projects of the default account, inserted in one statement. */
async function createProjects(db, { account, workspace }, count, namePrefix) {
  const { newId, ID_PREFIX } = dist.domain();
  const now = Date.now();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newId(ID_PREFIX.project),
    workspace_id: workspace.id,
    account_id: account.id,
    name: `${namePrefix} ${i + 1}`,
    description: null,
    kind: 'manual',
    status: 'active',
    settings_override: null,
    created_at: now,
    updated_at: now,
  }));
  return db.insertInto('projects').values(rows).returningAll().execute();
}

/**
 * A non-default Client of the account with its own API key and an active membership of the given
 * role on the Project, so a request by it runs the key lookup, the project read and the
 * membership check.
 */
async function createMemberClient(db, { account, project, role }) {
  const { newId, ID_PREFIX, generateApiKey, hashApiKey, apiKeyPrefix } = dist.domain();
  const now = Date.now();
  const apiKey = generateApiKey();
  const clientId = newId(ID_PREFIX.client);
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('clients')
      .values({
        id: clientId,
        account_id: account.id,
        name: 'bench member',
        status: 'active',
        is_default: false,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await tx
      .insertInto('api_keys')
      .values({
        id: newId(ID_PREFIX.apiKey),
        client_id: clientId,
        key_hash: hashApiKey(apiKey),
        key_prefix: apiKeyPrefix(apiKey),
        created_at: now,
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    await tx
      .insertInto('project_members')
      .values({
        id: newId(ID_PREFIX.member),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: account.id,
        role,
        status: 'active',
        subject_type: 'client',
        subject_id: clientId,
        client_id: clientId,
        created_by_account_id: account.id,
        created_by_client_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  });
  return { clientId, apiKey };
}

module.exports = { defaultAccount, createProjects, createMemberClient };
