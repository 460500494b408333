import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  Allow,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { TOOL_TRANSPORT_PREFERENCES } from '@hearth/app';
import { TEMPORARY_CONVERSATION_LIMITS as LIMITS } from '@hearth/domain';
import type { PageStagedWriteRow } from '@hearth/persistence';
import { queryBoolean } from '../http/query-boolean';

const ID_MAX = 200;
const NOT_BLANK = /\S/;

/**
 * `POST /sessions/:id/temporary-conversations` and `POST /projects/:id/temporary-conversations`.
 * `retention_policy` and `ttl_seconds` are checked by the domain rule for their own codes
 * (`invalid_retention_policy`, `ttl_required`, `invalid_ttl_seconds`).
 */
export class CreateTemporaryConversationDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: LIMITS.title_max })
  @IsOptional()
  @IsString()
  @Length(1, LIMITS.title_max)
  @Matches(NOT_BLANK, { message: 'title must not be blank' })
  title?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: LIMITS.purpose_max })
  @IsOptional()
  @IsString()
  @Length(1, LIMITS.purpose_max)
  @Matches(NOT_BLANK, { message: 'purpose must not be blank' })
  purpose?: string;

  @ApiPropertyOptional({
    enum: ['delete_on_finalize', 'ttl', 'keep_for_debug'],
    default: 'delete_on_finalize',
  })
  @Allow()
  retention_policy?: unknown;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 86400,
    description: 'Required with policy ttl, refused otherwise',
  })
  @Allow()
  ttl_seconds?: unknown;
}

/** `POST /temporary-conversations/:id/messages`: role and content are checked for their own codes. */
export class AppendTemporaryMessageDto {
  @ApiPropertyOptional({ enum: ['user', 'assistant', 'system'] })
  @Allow()
  role?: unknown;

  @ApiPropertyOptional({ description: 'Non-empty text' })
  @Allow()
  content?: unknown;
}

/** Spec 2's generation parameters of the temporary conversation turns. */
export class TemporaryGenerationParamsDto {
  @IsOptional()
  @IsString()
  @Length(1, 64)
  reasoning_effort?: string;

  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number;

  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  max_output_tokens?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  max_context_tokens?: number;
}

class TemporaryTurnBaseDto {
  @ApiPropertyOptional({ maxLength: LIMITS.dynamic_context_max, description: 'This turn only, never stored' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.dynamic_context_max)
  dynamic_context?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => TemporaryGenerationParamsDto)
  generation_params?: TemporaryGenerationParamsDto;

  @ApiPropertyOptional({ enum: TOOL_TRANSPORT_PREFERENCES, default: 'auto' })
  @IsOptional()
  @IsIn(TOOL_TRANSPORT_PREFERENCES)
  tool_transport_preference?: (typeof TOOL_TRANSPORT_PREFERENCES)[number];
}

export class TemporaryRespondDto extends TemporaryTurnBaseDto {
  @ApiPropertyOptional({ description: '{role, content}: appended atomically before generation' })
  @IsOptional()
  @IsObject()
  input_message?: { role?: unknown; content?: unknown };
}

export class TemporaryRetryDto extends TemporaryTurnBaseDto {
  @IsString()
  @Length(1, ID_MAX)
  floor_id!: string;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  confirmed_execution_ids?: string[];

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  confirmed_session_state_mutation_ids?: string[];
}

export class TemporaryRetryStepDto extends TemporaryRetryDto {
  @IsInt()
  @Min(1)
  from_step_index!: number;
}

/** `GET /temporary-conversations/:id/inspect?include_agent_private=true|false|1|0`. */
export class InspectTemporaryQueryDto {
  @IsOptional()
  @Transform(queryBoolean)
  @IsIn([true, false], { message: 'include_agent_private must be true, false, 1 or 0' })
  include_agent_private?: boolean;
}

/** `POST /temporary-conversations/:id/export`. */
export class ExportTemporaryConversationDto {
  @IsIn(['page_staged_write'])
  target!: 'page_staged_write';

  @IsString()
  @Length(1, ID_MAX)
  target_page_id!: string;

  @IsString()
  @Length(1, 2000)
  reason!: string;
}

export const toExportView = (row: PageStagedWriteRow) => ({
  conversation_id: row.source_conversation_id,
  target: row.target,
  staged_write_id: row.id,
  target_page_id: row.target_page_id,
  source_page_id: row.source_page_id,
  created_at: row.created_at,
  status: row.status,
});
