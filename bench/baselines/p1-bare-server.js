'use strict';
// P1 anchor: a bare `node:http` + `pg` server answering `GET /projects/:id` with the same queries the
// API runs (the key lookup join of credentials.repository.ts, the project primary-key read, the
// membership check of projects.repository.ts), on a pool of the same size. env: DATABASE_URL.
const http = require('node:http');
const { createHash } = require('node:crypto');
const pg = require('pg');

pg.types.setTypeParser(20, (value) => Number(value));
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 10,
  application_name: 'bench-bare-p1',
});

const KEY_LOOKUP = `select "k"."id" as "key_id", "c"."id" as "client_id", "c"."status" as "client_status",
  "c"."is_default" as "client_is_default", "a"."id" as "account_id", "a"."status" as "account_status",
  "a"."role" as "account_role" from "api_keys" as "k" inner join "clients" as "c" on "c"."id" = "k"."client_id"
  inner join "accounts" as "a" on "a"."id" = "c"."account_id" where "k"."key_hash" = $1 and "k"."revoked_at" is null`;
const PROJECT = `select * from "projects" where "id" = $1`;
const MEMBER_CLIENT = `select "role" from "project_members" where "project_id" = $1 and "status" = $2
  and ("subject_type" = $3 and "subject_id" = $4)`;
const MEMBER_DEFAULT_CLIENT = `select "role" from "project_members" where "project_id" = $1 and "status" = $2
  and (("subject_type" = $3 and "subject_id" = $4) or ("subject_type" = $5 and "subject_id" = $6))`;

function send(res, status, body) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

async function handle(req, res) {
  const match = /^\/projects\/([^/?]+)$/.exec(req.url);
  if (req.method !== 'GET' || !match)
    return send(res, 404, { error: { code: 'not_found', message: 'Not found' } });
  const key = typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'].trim() : '';
  if (!key) return send(res, 401, { error: { code: 'unauthorized', message: 'Missing x-api-key header' } });
  const hash = createHash('sha256').update(key, 'utf8').digest('hex');
  const credential = (await pool.query(KEY_LOOKUP, [hash])).rows[0];
  if (!credential) return send(res, 401, { error: { code: 'unauthorized', message: 'Unknown API key' } });
  if (credential.account_status !== 'active' || credential.client_status !== 'active') {
    return send(res, 403, { error: { code: 'account_disabled', message: 'Disabled' } });
  }
  const project = (await pool.query(PROJECT, [decodeURIComponent(match[1])])).rows[0];
  let role = null;
  if (project) {
    if (project.account_id === credential.account_id && credential.client_is_default) role = 'owner';
    else {
      const member = credential.client_is_default
        ? await pool.query(MEMBER_DEFAULT_CLIENT, [
            project.id,
            'active',
            'client',
            credential.client_id,
            'account',
            credential.account_id,
          ])
        : await pool.query(MEMBER_CLIENT, [project.id, 'active', 'client', credential.client_id]);
      role = member.rows[0]?.role ?? null;
    }
  }
  if (!project || !role)
    return send(res, 404, { error: { code: 'project_not_found', message: 'Project not found' } });
  return send(res, 200, {
    id: project.id,
    workspace_id: project.workspace_id,
    name: project.name,
    description: project.description,
    kind: project.kind,
    status: project.status,
    role,
    created_at: project.created_at,
    updated_at: project.updated_at,
  });
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((error) =>
    send(res, 500, { error: { code: 'internal_error', message: String(error) } }),
  );
});
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  pool.end().finally(() => process.exit(0));
});
