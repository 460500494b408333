import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Exclude, Transform, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { isPlainObject, validationError } from '@hearth/domain';
import type { AssetVersionRow, WorldbookEntryRow, WorldbookRow } from '@hearth/persistence';
import { QueryBool } from '../http/query-boolean';

const NOT_BLANK = /\S/;
/** Validated only when present (`null` is a value, and refused where the field is not nullable). */
const Present = () => ValidateIf((_o, v) => v !== undefined);
/** Validated only when present and not null. */
const NotNull = () => ValidateIf((_o, v) => v !== undefined && v !== null);
/** Query strings: decimal integers become numbers; anything else stays a string and fails `IsInt`. */
const QueryInt = () =>
  Transform(({ value }) => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value));

export const WORLDBOOK_NAME_MAX = 200;
export const WORLDBOOK_BATCH_MAX = 100;

// ---- params and queries ----

export class WorldbookIdParamDto {
  @IsString() @Length(1, 200) id!: string;
}

export class WorldbookVersionParamDto extends WorldbookIdParamDto {
  @IsString() @Length(1, 200) version_id!: string;
}

export class WorldbookEntriesParamDto {
  @IsString() @Length(1, 200) worldbook_id!: string;
}

export class WorldbookEntryParamDto extends WorldbookEntriesParamDto {
  @IsString() @Length(1, 200) id!: string;
}

export class PageQueryDto {
  /** 1-200, default 50. */
  @Present() @QueryInt() @IsInt() @Min(1) @Max(200) limit?: number;
  /** Default 0. */
  @Present() @QueryInt() @IsInt() @Min(0) offset?: number;
}

export class ListWorldbooksQueryDto extends PageQueryDto {
  /** Case-insensitive substring of the name (empty: no filter). */
  @Present() @IsString() @Length(0, 200) q?: string;
  @Present() @IsIn(['updated_at', 'created_at', 'name']) sort_by?: 'updated_at' | 'created_at' | 'name';
  @Present() @IsIn(['asc', 'desc']) sort_order?: 'asc' | 'desc';
}

export class ListWorldbookEntriesQueryDto extends PageQueryDto {
  /** Case-insensitive substring of a key, secondary key, the comment or the content (empty: no filter). */
  @Present() @IsString() @Length(0, 500) q?: string;
  @Present() @IsIn(['order', 'updated_at', 'uid']) sort_by?: 'order' | 'updated_at' | 'uid';
  @Present() @IsIn(['asc', 'desc']) sort_order?: 'asc' | 'desc';
  @Present() @QueryBool() @IsBoolean() disable?: boolean;
  @Present() @QueryBool() @IsBoolean() constant?: boolean;
  @Present() @QueryInt() @IsInt() @Min(0) @Max(7) position?: number;
}

export class ExpectedVersionQueryDto {
  @Present() @QueryInt() @IsInt() @Min(0) expected_version?: number;
}

// ---- bodies ----

export class PutWorldbookDto {
  @ApiProperty({ minLength: 1, maxLength: WORLDBOOK_NAME_MAX })
  @IsString()
  @Length(1, WORLDBOOK_NAME_MAX)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name!: string;

  /** The raw external worldbook (name, entries, global fields); read with `rawJsonObject` (see there). */
  @ApiProperty({ type: Object, description: 'The raw external worldbook: name, entries, global fields' })
  @Allow()
  @Exclude()
  data?: unknown;

  @ApiPropertyOptional() @Present() @IsInt() @Min(0) expected_version?: number;
  /** Legacy: the `updated_at` last read. */
  @ApiPropertyOptional() @Present() @IsInt() @Min(0) expected_updated_at?: number;
}

export class RollbackWorldbookDto {
  @IsString() @Length(1, 200) version_id!: string;
  @Present() @IsInt() @Min(0) expected_version?: number;
}

export class ImportWorldbookDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: WORLDBOOK_NAME_MAX })
  @Present()
  @IsString()
  @Length(1, WORLDBOOK_NAME_MAX)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name?: string;

  /** Read with `rawJsonObject` (see there). */
  @ApiProperty({ type: Object, description: 'An ST world file, a character_book, or a card carrying one' })
  @Allow()
  @Exclude()
  data?: unknown;
}

/** Spec 3's normalised entry fields, all optional (a PATCH, or a batch update's `fields`). */
export class WorldbookEntryFieldsDto {
  @Present() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true }) keys?: string[];
  @Present() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true }) keys_secondary?: string[];
  @Present() @IsString() content?: string;
  @Present() @IsString() comment?: string;
  @Present() @IsBoolean() selective?: boolean;
  /** 0 AND_ANY, 1 NOT_ALL, 2 NOT_ANY, 3 AND_ALL. */
  @Present() @IsInt() @Min(0) @Max(3) selective_logic?: number;
  @Present() @IsBoolean() constant?: boolean;
  /** 0-7; 7 is an outlet. */
  @Present() @IsInt() @Min(0) @Max(7) position?: number;
  @Present() @IsInt() @Min(-1_000_000_000) @Max(1_000_000_000) order?: number;
  @Present() @IsInt() @Min(0) @Max(1_000_000) depth?: number;
  /** 0 system, 1 user, 2 assistant. */
  @Present() @IsInt() @Min(0) @Max(2) role?: number;
  @Present() @IsBoolean() disable?: boolean;
  @NotNull() @IsInt() @Min(0) @Max(1_000_000) scan_depth?: number | null;
  @NotNull() @IsBoolean() case_sensitive?: boolean | null;
  @NotNull() @IsBoolean() match_whole_words?: boolean | null;
  @Present() @IsBoolean() exclude_recursion?: boolean;
  @Present() @IsBoolean() prevent_recursion?: boolean;
  /** null (or 0) is "not delayed". */
  @NotNull() @IsInt() @Min(0) @Max(1_000_000) delay_until_recursion?: number | null;
  @Present() @IsString() outlet_name?: string;
}

export class PatchWorldbookEntryDto extends WorldbookEntryFieldsDto {
  @Present() @IsInt() @Min(0) expected_version?: number;
}

/** `POST …/entries`: `keys` and `content` are required (checked by the use case, naming the field). */
export class CreateWorldbookEntryDto extends PatchWorldbookEntryDto {}

export class BatchIdsDto {
  @Present() @IsInt() @Min(0) expected_version?: number;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WORLDBOOK_BATCH_MAX)
  @ArrayUnique({ message: 'ids must be unique' })
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  ids!: string[];
}

export class BatchUpdateWorldbookEntriesDto extends BatchIdsDto {
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => WorldbookEntryFieldsDto)
  fields!: WorldbookEntryFieldsDto;
}

export class ReorderItemDto {
  @IsString() @Length(1, 200) id!: string;
  @IsInt() @Min(-1_000_000_000) @Max(1_000_000_000) order!: number;
}

export class ReorderWorldbookEntriesDto {
  @Present() @IsInt() @Min(0) expected_version?: number;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WORLDBOOK_BATCH_MAX)
  @ArrayUnique((item: { id?: unknown } | null) => item?.id, { message: 'items must have unique ids' })
  @ValidateNested({ each: true })
  @Type(() => ReorderItemDto)
  items!: ReorderItemDto[];
}

/**
 * A file-sized JSON object from the body, taken as sent (`@Body('data')`). The DTOs exclude it: the global
 * ValidationPipe's class-transformer would copy it key by key, which takes seconds for a 5 MB worldbook.
 */
export function rawJsonObject(value: unknown, field = 'data'): Record<string, unknown> {
  if (!isPlainObject(value)) {
    const problem = value === undefined ? `${field} is required` : `${field} must be an object`;
    throw validationError(problem, { fields: [{ field, problems: [problem] }] });
  }
  return value;
}

// ---- views ----

export const toWorldbookSummary = (b: WorldbookRow) => ({
  id: b.id,
  name: b.name,
  source: b.source,
  created_at: b.created_at,
  updated_at: b.updated_at,
  version: b.version,
});

export const toWorldbookEntryView = (e: WorldbookEntryRow, worldbookVersion: number) => ({
  id: e.id,
  worldbook_id: e.worldbook_id,
  uid: e.uid,
  keys: e.keys,
  keys_secondary: e.keys_secondary,
  content: e.content,
  comment: e.comment,
  selective: e.selective,
  selective_logic: e.selective_logic,
  constant: e.constant,
  position: e.position,
  order: e.order,
  depth: e.depth,
  role: e.role,
  disable: e.disable,
  scan_depth: e.scan_depth,
  case_sensitive: e.case_sensitive,
  match_whole_words: e.match_whole_words,
  exclude_recursion: e.exclude_recursion,
  prevent_recursion: e.prevent_recursion,
  delay_until_recursion: e.delay_until_recursion,
  outlet_name: e.outlet_name,
  created_at: e.created_at,
  updated_at: e.updated_at,
  /** The parent book's version after this read or write (the next write's expected_version). */
  worldbook_version: worldbookVersion,
});

export const toWorldbookVersionSummary = (v: Omit<AssetVersionRow, 'payload'>) => ({
  id: v.id,
  worldbook_id: v.asset_id,
  version_no: v.version_no,
  name: v.name,
  change_kind: v.change_kind,
  source_format: v.source_format,
  created_by_operation_id: v.created_by_operation_id,
  created_at: v.created_at,
});

export const pageMeta = (
  page: { total: number; limit: number; offset: number },
  returned: number,
  sort: { sort_by: string; sort_order: string },
  extra: Record<string, unknown> = {},
) => ({
  total: page.total,
  limit: page.limit,
  offset: page.offset,
  has_more: page.offset + returned < page.total,
  ...sort,
  ...extra,
});

/** `attachment; filename="<name>.json"` (ASCII fallback, quotes escaped) plus RFC 5987 `filename*` when needed. */
export function attachmentDisposition(name: string, extension = '.json'): string {
  const file = `${name}${extension}`;
  const ascii = file.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&');
  const header = `attachment; filename="${ascii}"`;
  if (/^[\x20-\x7e]*$/.test(file)) return header;
  const encoded = encodeURIComponent(file).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${header}; filename*=UTF-8''${encoded}`;
}
