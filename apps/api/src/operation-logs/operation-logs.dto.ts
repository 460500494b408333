import { OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import type { OperationLogList, OperationLogListInput } from '@hearth/app';
import { OPERATION_LOG_FILTERS, type OperationLogRow } from '@hearth/persistence';

/** Spec 3 "Operation logs" query: scope filters (they narrow, never widen), paging and order. */
export class OperationLogQueryDto {
  @IsOptional() @IsString() @Length(1, 200) workspace_id?: string;
  @IsOptional() @IsString() @Length(1, 200) project_id?: string;
  @IsOptional() @IsString() @Length(1, 200) actor_account_id?: string;
  @IsOptional() @IsString() @Length(1, 200) session_id?: string;
  @IsOptional() @IsString() @Length(1, 200) floor_id?: string;
  @IsOptional() @IsString() @Length(1, 200) run_id?: string;
  @IsOptional() @IsString() @Length(1, 200) target_type?: string;
  @IsOptional() @IsString() @Length(1, 200) target_id?: string;
  @IsOptional() @IsString() @Length(1, 200) action?: string;
  @IsOptional() @IsString() @Length(1, 200) actor_type?: string;

  @IsOptional()
  @IsIn(['succeeded', 'failed', 'denied', 'cancelled'])
  status?: 'succeeded' | 'failed' | 'denied' | 'cancelled';

  @IsOptional() @IsString() @Length(1, 200) operation_group_id?: string;
  @IsOptional() @IsString() @Length(1, 200) request_id?: string;

  /** 1-200, default 50. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  /** Default 0. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;

  /** By `created_at`; default `desc` (newest first). */
  @IsOptional()
  @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';
}

/** `GET /sessions/:id/operation-logs`: the session comes from the path. */
export class SessionOperationLogQueryDto extends OmitType(OperationLogQueryDto, ['session_id'] as const) {}

/** `GET /floors/:id/operation-logs`: the floor comes from the path. */
export class FloorOperationLogQueryDto extends OmitType(OperationLogQueryDto, ['floor_id'] as const) {}

export function toListInput(query: Partial<OperationLogQueryDto>): OperationLogListInput {
  const filters: OperationLogListInput['filters'] = {};
  for (const field of OPERATION_LOG_FILTERS) {
    const value = query[field];
    if (value !== undefined) filters[field] = value;
  }
  return {
    filters,
    limit: query.limit ?? 50,
    offset: query.offset ?? 0,
    sortOrder: query.sort_order ?? 'desc',
  };
}

/** Spec 3 "Operation log"; JSON columns come back parsed. */
export const toOperationLogView = (row: OperationLogRow) => ({
  id: row.id,
  account_id: row.account_id,
  actor_type: row.actor_type,
  actor_id: row.actor_id,
  operation_group_id: row.operation_group_id,
  request_id: row.request_id,
  workspace_id: row.workspace_id,
  project_id: row.project_id,
  actor_account_id: row.actor_account_id,
  source_type: row.source_type,
  action: row.action,
  status: row.status,
  session_id: row.session_id,
  branch_id: row.branch_id,
  floor_id: row.floor_id,
  run_id: row.run_id,
  target_type: row.target_type,
  target_id: row.target_id,
  before_ref: row.before_ref,
  after_ref: row.after_ref,
  diff: row.diff,
  metadata: row.metadata,
  created_at: row.created_at,
});

export const operationLogMeta = (list: OperationLogList) => ({
  total: list.total,
  limit: list.limit,
  offset: list.offset,
  has_more: list.offset + list.items.length < list.total,
  sort_by: 'created_at',
  sort_order: list.sortOrder,
});
