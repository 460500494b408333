import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@hearth/domain';
import type { PresetDetail, PresetVersionDetail } from '@hearth/app';
import type { AssetVersionRow, PresetRow } from '@hearth/persistence';

/** Library asset names (presets, regex profiles): 1-200 characters, not blank. */
export const LIBRARY_NAME_MAX = 200;
const NOT_BLANK = /\S/;
const SORT_BY = ['updated_at', 'created_at', 'name'] as const;
const SORT_ORDER = ['desc', 'asc'] as const;

/** `POST /import/preset` and `PUT /presets/:id`: the preset file (a JSON object) and an optional name. */
export class PresetBodyDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: LIBRARY_NAME_MAX, default: 'Unnamed Preset' })
  @IsOptional()
  @IsString()
  @Length(1, LIBRARY_NAME_MAX)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name?: string;

  @ApiProperty({ type: Object, description: 'The chat-completion preset file, stored unchanged' })
  @IsDefined()
  @IsObject()
  data!: Record<string, unknown>;
}

/** `POST /<plural>/:id/rollback`. */
export class RollbackDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, 200)
  version_id!: string;
}

/** `:id` of a library asset route. */
export class AssetIdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}

/** `:id/versions/:version_id`. */
export class AssetVersionParamDto extends AssetIdParamDto {
  @IsString()
  @Length(1, 200)
  version_id!: string;
}

/** Offset paging: limit 1-200 (default 50), offset from 0. */
export class LibraryPageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;
}

/** `GET /presets`, `GET /regex-profiles`: paging, `q` (name substring, case-insensitive) and sort. */
export class LibraryListQueryDto extends LibraryPageQueryDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(0, 200)
  q?: string;

  @ApiPropertyOptional({ enum: SORT_BY, default: 'updated_at' })
  @IsOptional()
  @IsIn(SORT_BY)
  sort_by?: (typeof SORT_BY)[number];

  @ApiPropertyOptional({ enum: SORT_ORDER, default: 'desc' })
  @IsOptional()
  @IsIn(SORT_ORDER)
  sort_order?: (typeof SORT_ORDER)[number];
}

export const toListInput = (query: LibraryListQueryDto) => ({
  q: query.q,
  sortBy: query.sort_by,
  sortOrder: query.sort_order,
  limit: query.limit,
  offset: query.offset,
});

export const listMeta = (
  q: { limit: number; offset: number; sortBy: string; sortOrder: string },
  total: number,
  returned: number,
) => ({
  total,
  limit: q.limit,
  offset: q.offset,
  has_more: q.offset + returned < total,
  sort_by: q.sortBy,
  sort_order: q.sortOrder,
});

export const versionListMeta = (
  page: { limit: number; offset: number; total: number },
  returned: number,
) => ({
  total: page.total,
  limit: page.limit,
  offset: page.offset,
  has_more: page.offset + returned < page.total,
  sort_by: 'version_no',
  sort_order: 'desc' as const,
});

export const toPresetSummary = (p: PresetRow) => ({
  id: p.id,
  name: p.name,
  source: p.source,
  version_no: p.version_no,
  latest_version_id: p.latest_version_id,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

export const toPresetDetail = (d: PresetDetail) => ({ ...toPresetSummary(d.preset), data: d.data });

export const toVersionSummary = (v: Omit<AssetVersionRow, 'payload'>) => ({
  id: v.id,
  version_no: v.version_no,
  name: v.name,
  change_kind: v.change_kind,
  source_format: v.source_format,
  created_by_operation_id: v.created_by_operation_id,
  created_at: v.created_at,
});

export const toPresetVersionDetail = (d: PresetVersionDetail) => ({
  ...toVersionSummary(d.version),
  data: d.data,
});
