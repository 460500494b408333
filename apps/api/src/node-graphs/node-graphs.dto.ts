import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsOptional, IsString, Max, Min, ValidateIf } from 'class-validator';
import {
  NODE_GRAPH_DESCRIPTION_MAX_CHARS,
  NODE_GRAPH_LIST_MAX_LIMIT,
  NODE_GRAPH_NAME_MAX_CHARS,
} from '@hearth/domain';
import type { NodeGraphRow, NodeGraphSummaryRow } from '@hearth/persistence';

const GRAPH_DOC = {
  description:
    '`{nodes: [{id, type, data?, position?: {x, y}}], edges: [{id, source, target, data?}]}`: unique node ' +
    'ids and edge ids, edge ends naming nodes, at most 1,000 nodes, 5,000 edges and 1 MiB serialised',
};
const MAX_VERSION = 2_147_483_647;

/**
 * `POST /projects/:id/node-graphs`. The lengths of `name` and `description` and every check of
 * `graph` are judged by the node graph rules (`validation_error`, `node_graph_invalid`,
 * `node_graph_too_large`); here only the fields' presence and types.
 */
export class CreateNodeGraphDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: NODE_GRAPH_NAME_MAX_CHARS })
  @IsString()
  name!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: NODE_GRAPH_DESCRIPTION_MAX_CHARS })
  @ValidateIf((o: CreateNodeGraphDto) => o.description !== undefined && o.description !== null)
  @IsString()
  description?: string | null;

  @ApiProperty(GRAPH_DOC)
  @IsDefined()
  graph!: unknown;
}

/**
 * `PATCH /projects/:id/node-graphs/:graph_id`: `expected_version` (the version read) and at least one of
 * `name`, `description` (null clears it), `graph` (the whole new document).
 */
export class UpdateNodeGraphDto {
  @ApiProperty({ type: Number, minimum: 1, description: 'The version the change was made on' })
  @IsInt()
  @Min(1)
  @Max(MAX_VERSION)
  expected_version!: number;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: NODE_GRAPH_NAME_MAX_CHARS })
  @ValidateIf((o: UpdateNodeGraphDto) => o.name !== undefined)
  @IsString()
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: NODE_GRAPH_DESCRIPTION_MAX_CHARS })
  @ValidateIf((o: UpdateNodeGraphDto) => o.description !== undefined && o.description !== null)
  @IsString()
  description?: string | null;

  @ApiPropertyOptional(GRAPH_DOC)
  @IsOptional()
  graph?: unknown;
}

export class DeleteNodeGraphQueryDto {
  @ApiPropertyOptional({ type: Number, minimum: 1, description: 'Delete only at this version' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_VERSION)
  expected_version?: number;
}

export class ListNodeGraphsQueryDto {
  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: NODE_GRAPH_LIST_MAX_LIMIT, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(NODE_GRAPH_LIST_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ type: String, description: 'The previous page’s next_cursor' })
  @IsOptional()
  @IsString()
  cursor?: string;
}

/** A node graph as the list shows it: everything but the document. */
export interface NodeGraphSummaryView {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  name: string;
  description: string | null;
  version: number;
  node_count: number;
  edge_count: number;
  graph_byte_count: number;
  created_by_account_id: string;
  created_by_client_id: string;
  updated_by_account_id: string;
  updated_by_client_id: string;
  created_at: number;
  updated_at: number;
}

/** A node graph with its document (detail, create, update). */
export interface NodeGraphView extends NodeGraphSummaryView {
  graph: unknown;
}

export const toNodeGraphSummaryView = (g: NodeGraphSummaryRow): NodeGraphSummaryView => ({
  id: g.id,
  workspace_id: g.workspace_id,
  project_id: g.project_id,
  account_id: g.account_id,
  name: g.name,
  description: g.description,
  version: g.version,
  node_count: g.node_count,
  edge_count: g.edge_count,
  graph_byte_count: g.graph_byte_count,
  created_by_account_id: g.created_by_account_id,
  created_by_client_id: g.created_by_client_id,
  updated_by_account_id: g.updated_by_account_id,
  updated_by_client_id: g.updated_by_client_id,
  created_at: g.created_at,
  updated_at: g.updated_at,
});

export const toNodeGraphView = (g: NodeGraphRow): NodeGraphView => ({
  ...toNodeGraphSummaryView(g),
  graph: g.graph,
});
