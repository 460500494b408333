import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Length, Matches } from 'class-validator';
import { REGISTRY_NAME_MAX_CHARS } from '@hearth/domain';
import type { ToolPolicyRow } from '@hearth/persistence';

// eslint-disable-next-line no-control-regex -- names must be non-blank and free of NUL
const NAME = /^(?=[\s\S]*\S)[^\u0000]*$/;
const NAME_MESSAGE = { message: 'name must not be blank or contain NUL characters' };

/** A list route without query parameters (any given is an unknown field: 400). */
export class EmptyQueryDto {}

/** `POST /tool-policies`. `policy_json` is judged by the settings rules. */
export class CreateToolPolicyDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: REGISTRY_NAME_MAX_CHARS })
  @IsString()
  @Length(1, REGISTRY_NAME_MAX_CHARS)
  @Matches(NAME, NAME_MESSAGE)
  name!: string;

  @ApiProperty({
    type: Object,
    description: '{mode: "allow" | "deny", tools: string[] (unique, at most 200)}',
  })
  @IsObject()
  policy_json!: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['active', 'archived'], default: 'active' })
  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';
}

/** `PATCH /tool-policies/:id`: at least one field; `policy_json` is replaced whole. */
export class UpdateToolPolicyDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: REGISTRY_NAME_MAX_CHARS })
  @IsOptional()
  @IsString()
  @Length(1, REGISTRY_NAME_MAX_CHARS)
  @Matches(NAME, NAME_MESSAGE)
  name?: string;

  @ApiPropertyOptional({ type: Object })
  @IsOptional()
  @IsObject()
  policy_json?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['active', 'archived'] })
  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';
}

export const toToolPolicyView = (p: ToolPolicyRow) => ({
  id: p.id,
  workspace_id: p.workspace_id,
  name: p.name,
  policy_json: p.policy_json,
  status: p.status,
  created_at: p.created_at,
  updated_at: p.updated_at,
});
