import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  VARIABLE_BATCH_MAX_ITEMS,
  VARIABLE_HOST_ID_MAX_CHARS,
  VARIABLE_KEY_MAX_CHARS,
  VARIABLE_LIST_DEFAULT_LIMIT,
  VARIABLE_LIST_MAX_LIMIT,
  VARIABLE_SCOPES,
  scopeRef,
  type ListVariablesUseCase,
  type ResolvedSnapshot,
  type VariableWriteInput,
} from '@hearth/app';
import type {
  StagedWriteRow,
  VariablePromotionRow,
  VariableRow,
  VariableScopeName,
} from '@hearth/persistence';
import { queryBoolean } from '../http/query-boolean';

// eslint-disable-next-line no-control-regex -- keys must be free of NUL
const NO_NUL = /^[^\u0000]*$/;
const NO_NUL_MESSAGE = { message: 'must not contain NUL characters' };
/** A branch scope_id is `<session_id>:<branch_id>`. */
const SCOPE_ID_MAX_CHARS = VARIABLE_HOST_ID_MAX_CHARS * 2 + 1;

/** One `VariableWrite` (spec 2 "Upsert body"). `value` is any JSON, null included (checked by the use case). */
export class VariableWriteDto {
  @ApiProperty({ enum: VARIABLE_SCOPES })
  @IsIn(VARIABLE_SCOPES)
  scope!: VariableScopeName;

  @ApiPropertyOptional({
    type: String,
    description: 'Host id: `global`, session id (chat), floor id, page id, or `<session_id>:<branch_id>`',
  })
  @IsOptional()
  @IsString()
  @Length(1, SCOPE_ID_MAX_CHARS)
  scope_id?: string;

  @ApiPropertyOptional({ type: String, description: 'Branch scope only, with branch_id' })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  session_id?: string;

  @ApiPropertyOptional({ type: String, description: 'Branch scope only, with session_id' })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  branch_id?: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: VARIABLE_KEY_MAX_CHARS })
  @IsString()
  @Length(1, VARIABLE_KEY_MAX_CHARS)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  key!: string;

  @ApiProperty({ description: 'Any JSON value (null included)' })
  @Allow()
  value!: unknown;
}

/** `PUT /variables/batch`: 1-100 writes. */
export class VariableBatchDto {
  @ApiProperty({ type: [VariableWriteDto], minItems: 1, maxItems: VARIABLE_BATCH_MAX_ITEMS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(VARIABLE_BATCH_MAX_ITEMS)
  @ValidateNested({ each: true })
  @Type(() => VariableWriteDto)
  items!: VariableWriteDto[];
}

export const toWriteInput = (dto: VariableWriteDto): VariableWriteInput => ({
  scope: dto.scope,
  scope_id: dto.scope_id ?? undefined,
  session_id: dto.session_id ?? undefined,
  branch_id: dto.branch_id ?? undefined,
  key: dto.key,
  value: dto.value,
});

/** `GET /variables` (spec 2 "List query"). */
export class VariableListQueryDto {
  @ApiPropertyOptional({ enum: VARIABLE_SCOPES })
  @IsOptional()
  @IsIn(VARIABLE_SCOPES)
  scope?: VariableScopeName;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, SCOPE_ID_MAX_CHARS)
  scope_id?: string;

  @ApiPropertyOptional({ type: String, description: 'Only with scope=branch' })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  session_id?: string;

  @ApiPropertyOptional({ type: String, description: 'Only with scope=branch' })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  branch_id?: string;

  @ApiPropertyOptional({ type: String, description: 'Exact key' })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_KEY_MAX_CHARS)
  key?: string;

  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: VARIABLE_LIST_MAX_LIMIT, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(VARIABLE_LIST_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ type: Number, minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;

  @ApiPropertyOptional({ enum: ['updated_at', 'key'], default: 'updated_at' })
  @IsOptional()
  @IsIn(['updated_at', 'key'])
  sort_by?: 'updated_at' | 'key';

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc' })
  @IsOptional()
  @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';
}

export const toListInput = (q: VariableListQueryDto): Parameters<ListVariablesUseCase['execute']>[1] => ({
  scope: q.scope,
  scopeId: q.scope_id,
  sessionId: q.session_id,
  branchId: q.branch_id,
  key: q.key,
  limit: q.limit ?? VARIABLE_LIST_DEFAULT_LIMIT,
  offset: q.offset ?? 0,
  sortBy: q.sort_by ?? 'updated_at',
  sortOrder: q.sort_order ?? 'desc',
});

/** `GET /variables/resolve` (spec 2 "Resolve query"). */
export class ResolveQueryDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  session_id!: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  branch_id?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  floor_id?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, VARIABLE_HOST_ID_MAX_CHARS)
  page_id?: string;

  @ApiPropertyOptional({ type: Boolean, default: false })
  @IsOptional()
  @Transform(queryBoolean)
  @IsBoolean()
  include_layers?: boolean;
}

export class VariableIdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}

export class PageIdParamDto {
  @IsString()
  @Length(1, 200)
  pageId!: string;
}

/** Spec 2 "Variable" (plus created_at); `scope_ref` is `{session_id, branch_id}` for branch, else null. */
export const toVariableView = (v: VariableRow) => ({
  id: v.id,
  scope: v.scope,
  scope_id: v.scope_id,
  scope_ref: scopeRef(v.scope, v.scope_id),
  key: v.key,
  value: v.value,
  created_at: v.created_at,
  updated_at: v.updated_at,
});

export const toResolveView = (r: ResolvedSnapshot) => ({
  context: r.context,
  resolved: r.resolved,
  ...(r.layers
    ? {
        layers: r.layers.map((l) => ({
          scope: l.scope,
          scope_id: l.scope_id,
          scope_ref: l.scope_ref,
          items: l.items.map(toVariableView),
        })),
      }
    : {}),
});

/** Spec 2 "Staged variable write item (page ledger)". */
export const toStagedWriteView = (s: StagedWriteRow) => ({
  id: s.id,
  key: s.key,
  op: s.op,
  value: s.value,
  intent: s.intent,
  conflict_policy: s.conflict_policy,
  reason: s.reason,
  source: s.source,
  evidence: s.evidence,
  status: s.status,
  decision_reason: s.decision_reason,
  created_at: s.created_at,
  resolved_at: s.resolved_at,
});

/** Spec 2 "Variable promotion trace item". */
export const toPromotionView = (p: VariablePromotionRow) => ({
  id: p.id,
  staged_write_id: p.staged_write_id,
  key: p.key,
  from_scope: p.from_scope,
  from_scope_id: p.from_scope_id,
  to_scope: p.to_scope,
  to_scope_id: p.to_scope_id,
  conflict_policy: p.conflict_policy,
  source_variable_id: p.source_variable_id,
  target_variable_id: p.target_variable_id,
  value: p.value,
  created_at: p.created_at,
});
