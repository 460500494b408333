import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { USER_CARD_BATCH_MAX_IDS, type UserCardListInput } from '@hearth/app';
import type { UserCardRow } from '@hearth/persistence';
import { queryBoolean } from '../http/query-boolean';

const INT32_MAX = 2147483647;

/** `POST /users`. The snapshot's `name` and size are checked by the use case. */
export class CreateUserCardDto {
  @ApiProperty({
    type: Object,
    description: 'The persona: `name` (1-200 characters) required, any other fields kept',
  })
  @IsObject()
  snapshot!: Record<string, unknown>;
}

/**
 * `PATCH /users/:id`: at least one of snapshot or status (checked by the use case). Null is not a
 * snapshot or a status (400); a null `expected_revision` is no check, like an absent one.
 */
export class UpdateUserCardDto {
  @ApiPropertyOptional({ type: Object, description: 'Replaces the whole snapshot' })
  @ValidateIf((o: UpdateUserCardDto) => o.snapshot !== undefined)
  @IsObject()
  snapshot?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['active', 'disabled'] })
  @ValidateIf((o: UpdateUserCardDto) => o.status !== undefined)
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';

  @ApiPropertyOptional({ type: Number, minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INT32_MAX)
  expected_revision?: number;
}

/** `DELETE /users/:id` optional body. */
export class DeleteUserCardDto {
  @ApiPropertyOptional({ type: Number, minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(INT32_MAX)
  expected_revision?: number;
}

/** `POST /users/batch/delete`: 1-100 unique ids. */
export class UserCardBatchIdsDto {
  @ApiProperty({ type: [String], minItems: 1, maxItems: USER_CARD_BATCH_MAX_IDS, uniqueItems: true })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(USER_CARD_BATCH_MAX_IDS)
  @ArrayUnique()
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  ids!: string[];
}

/** `PATCH /users/batch/status`. */
export class UserCardBatchStatusDto extends UserCardBatchIdsDto {
  @ApiProperty({ enum: ['active', 'disabled'] })
  @IsIn(['active', 'disabled'])
  status!: 'active' | 'disabled';
}

/** `GET /users` query (spec 3 "User cards"; limit 1-200, default 50). */
export class UserCardListQueryDto {
  @ApiPropertyOptional({ enum: ['active', 'disabled', 'deleted'] })
  @IsOptional()
  @IsIn(['active', 'disabled', 'deleted'])
  status?: 'active' | 'disabled' | 'deleted';

  @ApiPropertyOptional({ type: Boolean, default: false })
  @IsOptional()
  @Transform(queryBoolean)
  @IsBoolean()
  include_deleted?: boolean;

  @ApiPropertyOptional({ type: String, description: 'Case-insensitive substring of the name or description' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  keyword?: string;

  @ApiPropertyOptional({ enum: ['updated_at', 'created_at', 'name'], default: 'updated_at' })
  @IsOptional()
  @IsIn(['updated_at', 'created_at', 'name'])
  sort_by?: 'updated_at' | 'created_at' | 'name';

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc' })
  @IsOptional()
  @IsIn(['asc', 'desc'])
  sort_order?: 'asc' | 'desc';

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
}

export const toUserCardListInput = (query: UserCardListQueryDto): UserCardListInput => ({
  status: query.status,
  includeDeleted: query.include_deleted ?? false,
  keyword: query.keyword,
  sortBy: query.sort_by ?? 'updated_at',
  sortOrder: query.sort_order ?? 'desc',
  limit: query.limit ?? 50,
  offset: query.offset ?? 0,
});

/** Spec 3 "User card". */
export const toUserCardView = (card: UserCardRow) => ({
  id: card.id,
  name: card.name,
  status: card.status,
  snapshot: card.snapshot,
  revision: card.revision,
  created_at: card.created_at,
  updated_at: card.updated_at,
});
