import type { Json } from './core.table';

/** A Project node graph: a versioned JSON document of nodes and edges. */
export interface NodeGraphsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  /** The Project owner account. */
  account_id: string;
  name: string;
  description: string | null;
  /** `{nodes, edges}`, written as serialised text. */
  graph: Json;
  /** UTF-8 size of the serialised graph, as checked against the 1 MiB limit. */
  graph_byte_count: number;
  node_count: number;
  edge_count: number;
  /** 1 at creation, one more at every write that changes something. */
  version: number;
  created_by_account_id: string;
  created_by_client_id: string;
  updated_by_account_id: string;
  updated_by_client_id: string;
  created_at: number;
  updated_at: number;
}
