import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min, ValidateIf } from 'class-validator';
import {
  DERIVED_OUTPUT_LIST_MAX_LIMIT,
  DERIVED_OUTPUT_STATUSES,
  type DerivedOutputStatus,
} from '@hearth/domain';
import type { DerivedOutputRow } from '@hearth/persistence';

const ANY_JSON = { description: 'Any JSON value, at most 256 KiB serialised' };

/**
 * `POST /projects/:id/derived-outputs`. `domain` length, `status` and `value` are judged by the
 * derived output rules, so each failure carries its spec code (`derived_output_invalid_status`,
 * `derived_output_payload_invalid`, `derived_output_payload_too_large`).
 */
export class CreateDerivedOutputDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: 128 })
  @IsString()
  domain!: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  source_session_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  source_floor_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  source_page_id?: string | null;

  /** Default `{}`; `null` is a JSON value and is kept. */
  @ApiPropertyOptional(ANY_JSON)
  @IsOptional()
  value?: unknown;

  @ApiPropertyOptional({ type: String, enum: ['draft', 'published'], default: 'draft' })
  @ValidateIf((o: CreateDerivedOutputDto) => o.status !== undefined)
  @IsString()
  status?: string;
}

/** `PATCH /projects/:id/derived-outputs/:item_id`: at least one field (checked by the use case). */
export class UpdateDerivedOutputDto {
  @ApiPropertyOptional(ANY_JSON)
  @IsOptional()
  value?: unknown;

  @ApiPropertyOptional({ type: String, enum: DERIVED_OUTPUT_STATUSES })
  @ValidateIf((o: UpdateDerivedOutputDto) => o.status !== undefined)
  @IsString()
  status?: string;
}

export class ListDerivedOutputsQueryDto {
  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  domain?: string;

  @ApiPropertyOptional({ type: String, enum: DERIVED_OUTPUT_STATUSES })
  @IsOptional()
  @IsIn(DERIVED_OUTPUT_STATUSES)
  status?: DerivedOutputStatus;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  source_session_id?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  owner_account_id?: string;

  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: DERIVED_OUTPUT_LIST_MAX_LIMIT, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(DERIVED_OUTPUT_LIST_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ type: String, description: 'The previous page’s next_cursor' })
  @IsOptional()
  @IsString()
  cursor?: string;
}

/** Spec 1 "Derived Output". */
export interface DerivedOutputView {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  owner_account_id: string;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  domain: string;
  value: unknown;
  status: DerivedOutputStatus;
  created_at: number;
  updated_at: number;
}

export const toDerivedOutputView = (d: DerivedOutputRow): DerivedOutputView => ({
  id: d.id,
  workspace_id: d.workspace_id,
  project_id: d.project_id,
  account_id: d.account_id,
  owner_account_id: d.owner_account_id,
  source_session_id: d.source_session_id,
  source_floor_id: d.source_floor_id,
  source_page_id: d.source_page_id,
  domain: d.domain,
  value: d.value,
  status: d.status,
  created_at: d.created_at,
  updated_at: d.updated_at,
});
