import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Project node graphs (spec 1 names `/projects/:id/node-graphs`): one versioned JSON document of nodes
 * and edges per row, deleted (not archived) by `DELETE`. The limits are checked by the node graph rules
 * first; the CHECKs here are the last line.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE node_graphs (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
      description text CHECK (description IS NULL OR char_length(description) <= 2000),
      graph jsonb NOT NULL,
      graph_byte_count integer NOT NULL CHECK (graph_byte_count BETWEEN 0 AND 1048576),
      node_count integer NOT NULL CHECK (node_count BETWEEN 0 AND 1000),
      edge_count integer NOT NULL CHECK (edge_count BETWEEN 0 AND 5000),
      version integer NOT NULL CHECK (version >= 1),
      created_by_account_id text NOT NULL,
      created_by_client_id text NOT NULL,
      updated_by_account_id text NOT NULL,
      updated_by_client_id text NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX node_graphs_project ON node_graphs (project_id, id);
  `,
  );
}
