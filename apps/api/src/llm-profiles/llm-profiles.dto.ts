import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import {
  LLM_PROVIDER_NAMES,
  MODEL_ID_MAX_CHARS,
  MODEL_SLOTS,
  type LlmProviderName,
  type ModelSlot,
} from '@hearth/domain';
import type { LlmProfileRow } from '@hearth/persistence';
import { queryBoolean } from '../http/query-boolean';

/** Limits of profile fields (docs/decisions.md "Model profiles"). */
export const PRESET_NAME_MAX_CHARS = 120;
export const API_KEY_NAME_MAX_CHARS = 120;
export const API_KEY_MAX_CHARS = 4096;
export const BASE_URL_MAX_CHARS = 2000;
export const REASONING_EFFORT_MAX_CHARS = 64;

// eslint-disable-next-line no-control-regex -- names must be non-blank and free of NUL
const TEXT = /^(?=[\s\S]*\S)[^\u0000]*$/;
const TEXT_MESSAGE = { message: '$property must not be blank or contain NUL characters' };
// eslint-disable-next-line no-control-regex -- keys are one token: no whitespace, no control characters
const KEY = /^[^\s\u0000-\u001f\u007f]+$/;
const KEY_MESSAGE = { message: 'api_key must not contain whitespace or control characters' };

/** `POST /llm-profiles`. */
export class CreateLlmProfileDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: PRESET_NAME_MAX_CHARS })
  @IsString()
  @Length(1, PRESET_NAME_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  preset_name!: string;

  @ApiProperty({ enum: LLM_PROVIDER_NAMES })
  @IsIn(LLM_PROVIDER_NAMES)
  provider!: LlmProviderName;

  @ApiProperty({ type: String, minLength: 1, maxLength: MODEL_ID_MAX_CHARS })
  @IsString()
  @Length(1, MODEL_ID_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  model_id!: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: API_KEY_MAX_CHARS, writeOnly: true })
  @IsString()
  @Length(1, API_KEY_MAX_CHARS)
  @Matches(KEY, KEY_MESSAGE)
  api_key!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: BASE_URL_MAX_CHARS })
  @IsOptional()
  @IsString()
  @MaxLength(BASE_URL_MAX_CHARS)
  base_url?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: API_KEY_NAME_MAX_CHARS })
  @IsOptional()
  @IsString()
  @Length(1, API_KEY_NAME_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  api_key_name?: string | null;
}

/** `PATCH /llm-profiles/:id`: at least one field; `base_url` and `api_key_name` null clear them, other fields may not be null. */
export class UpdateLlmProfileDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: PRESET_NAME_MAX_CHARS })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @Length(1, PRESET_NAME_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  preset_name?: string;

  @ApiPropertyOptional({ enum: LLM_PROVIDER_NAMES })
  @ValidateIf((_, value) => value !== undefined)
  @IsIn(LLM_PROVIDER_NAMES)
  provider?: LlmProviderName;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: MODEL_ID_MAX_CHARS })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @Length(1, MODEL_ID_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  model_id?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: BASE_URL_MAX_CHARS })
  @IsOptional()
  @IsString()
  @MaxLength(BASE_URL_MAX_CHARS)
  base_url?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: API_KEY_NAME_MAX_CHARS })
  @IsOptional()
  @IsString()
  @Length(1, API_KEY_NAME_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  api_key_name?: string | null;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: API_KEY_MAX_CHARS, writeOnly: true })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @Length(1, API_KEY_MAX_CHARS)
  @Matches(KEY, KEY_MESSAGE)
  api_key?: string;

  @ApiPropertyOptional({ enum: ['active', 'disabled'] })
  @ValidateIf((_, value) => value !== undefined)
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';
}

/** `GET /llm-profiles` query. */
export class ListLlmProfilesQueryDto {
  @ApiPropertyOptional({ type: Boolean, default: false })
  @IsOptional()
  @Transform(queryBoolean)
  @IsBoolean()
  include_deleted?: boolean;

  @ApiPropertyOptional({ enum: ['active', 'disabled', 'deleted'] })
  @IsOptional()
  @IsIn(['active', 'disabled', 'deleted'])
  status?: LlmProfileRow['status'];
}

/** `POST /llm-profiles/:id/activate`. `params`: omitted keeps, null clears, an object replaces. */
export class ActivateLlmProfileDto {
  @ApiPropertyOptional({ enum: ['global', 'session'], default: 'global' })
  @IsOptional()
  @IsIn(['global', 'session'])
  scope?: 'global' | 'session';

  @ApiPropertyOptional({ type: String, description: 'required when scope is session' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  session_id?: string | null;

  @ApiPropertyOptional({ enum: MODEL_SLOTS, default: '*' })
  @IsOptional()
  @IsIn(MODEL_SLOTS)
  instance_slot?: ModelSlot;

  @ApiPropertyOptional({
    type: Object,
    nullable: true,
    description: 'spec 2 binding params; a null field cancels it',
  })
  // Judged by the use case: anything but an object or null is 400 `invalid_params` (spec 2's code).
  @Allow()
  params?: Record<string, unknown> | null;
}

/** `DELETE /llm-profiles/bindings/:slot` path. */
export class SlotParamDto {
  @IsIn(MODEL_SLOTS)
  slot!: ModelSlot;
}

/** `DELETE /llm-profiles/bindings/:slot` query. */
export class UnbindQueryDto {
  @ApiPropertyOptional({ enum: ['global', 'session'], default: 'global' })
  @IsOptional()
  @IsIn(['global', 'session'])
  scope?: 'global' | 'session';

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  session_id?: string;
}

/** `GET /llm-profiles/runtime` and `GET /llm-instances/resolved` query. */
export class SessionQueryDto {
  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  session_id?: string;
}

/** `POST /llm-profiles/models/discover`. */
export class DiscoverModelsDto {
  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  profile_id?: string;

  @ApiPropertyOptional({ enum: LLM_PROVIDER_NAMES })
  @IsOptional()
  @IsIn(LLM_PROVIDER_NAMES)
  provider?: LlmProviderName;

  @ApiPropertyOptional({ type: String, writeOnly: true })
  @IsOptional()
  @IsString()
  @Length(1, API_KEY_MAX_CHARS)
  @Matches(KEY, KEY_MESSAGE)
  api_key?: string;

  @ApiPropertyOptional({ type: String, maxLength: BASE_URL_MAX_CHARS })
  @IsOptional()
  @IsString()
  @MaxLength(BASE_URL_MAX_CHARS)
  base_url?: string;

  @ApiPropertyOptional({ type: Boolean, default: false })
  @IsOptional()
  @IsBoolean()
  allow_private_network?: boolean;
}

/** `POST /llm-profiles/models/test`. */
export class TestModelDto extends DiscoverModelsDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: MODEL_ID_MAX_CHARS })
  @IsOptional()
  @IsString()
  @Length(1, MODEL_ID_MAX_CHARS)
  @Matches(TEXT, TEXT_MESSAGE)
  model_id?: string;

  @ApiPropertyOptional({ type: String, maxLength: REASONING_EFFORT_MAX_CHARS })
  @IsOptional()
  @IsString()
  @Length(1, REASONING_EFFORT_MAX_CHARS)
  reasoning_effort?: string;
}

/** Spec 2 "LLM Profile": the key only masked. */
export const toLlmProfileView = (p: LlmProfileRow) => ({
  id: p.id,
  preset_name: p.preset_name,
  provider: p.provider,
  model_id: p.model_id,
  base_url: p.base_url,
  api_key_name: p.api_key_name,
  api_key_masked: p.api_key_masked,
  status: p.status,
  last_used_at: p.last_used_at,
  created_at: p.created_at,
  updated_at: p.updated_at,
});
