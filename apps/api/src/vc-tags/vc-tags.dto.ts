import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { Allow, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { VC_TAG_NAME_MAX_CHARS, type VcTagListInput } from '@hearth/app';
import type { VcTagRow } from '@hearth/persistence';

// eslint-disable-next-line no-control-regex -- names must be non-blank and free of NUL
const NAME = /^(?=[\s\S]*\S)[^\u0000]*$/;

/** `POST /vc-tags` (spec 3 "VC Tags"). */
export class CreateVcTagDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: VC_TAG_NAME_MAX_CHARS })
  @IsString()
  @Length(1, VC_TAG_NAME_MAX_CHARS)
  @Matches(NAME, { message: 'name must not be blank or contain NUL characters' })
  name!: string;

  @ApiProperty({ enum: ['floor', 'asset_version'] })
  @IsIn(['floor', 'asset_version'])
  target_type!: 'floor' | 'asset_version';

  @ApiProperty({ type: String, minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  target_id!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "For a floor: derived from the floor (when given, it must be the floor's session)",
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  session_id?: string | null;

  @ApiPropertyOptional({ description: 'Any JSON (at most 64 KiB serialised)' })
  @Allow()
  metadata?: unknown;
}

/** `GET /vc-tags` query: exact-match filters; limit 1-200 (default 50); by created_at, default desc. */
export class VcTagListQueryDto {
  @ApiPropertyOptional({ enum: ['floor', 'asset_version'] })
  @IsOptional()
  @IsIn(['floor', 'asset_version'])
  target_type?: 'floor' | 'asset_version';

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  target_id?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  session_id?: string;

  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({ type: Number, minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc' })
  @IsOptional()
  @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';
}

export const toVcTagListInput = (query: VcTagListQueryDto): VcTagListInput => ({
  targetType: query.target_type,
  targetId: query.target_id,
  sessionId: query.session_id,
  sortOrder: query.sort_order ?? 'desc',
  limit: query.limit ?? 50,
  offset: query.offset ?? 0,
});

/** Spec 3 "VC Tag", plus `target_asset_kind` (null for floors) as backup files carry it. */
export const toVcTagView = (tag: VcTagRow) => ({
  id: tag.id,
  account_id: tag.account_id,
  name: tag.name,
  target_type: tag.target_type,
  target_id: tag.target_id,
  target_asset_kind: tag.target_asset_kind,
  session_id: tag.session_id,
  metadata: tag.metadata,
  created_by_operation_id: tag.created_by_operation_id,
  created_at: tag.created_at,
});
