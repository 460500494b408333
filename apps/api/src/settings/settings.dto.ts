import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
} from 'class-validator';
import { TOOL_LIST_MAX_ITEMS, TOOL_NAME_MAX_CHARS } from '@hearth/domain';

// eslint-disable-next-line no-control-regex -- NUL is exactly what this refuses
const NO_NUL = /^[^\u0000]*$/;
const NO_NUL_MESSAGE = { message: '$property must not contain NUL characters' };

/** `PUT /projects/:id/settings/llm-profile-override`. */
export class PutLlmProfileOverrideDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  base_profile_id!: string;

  @ApiPropertyOptional({
    type: Object,
    description: 'Default {}. Keys: provider, model_id, params (spec 2 binding params; null cancels)',
  })
  @IsOptional()
  @IsObject()
  override_json?: Record<string, unknown>;
}

/** `PUT /projects/:id/settings/mcp-bindings`. */
export class PutMcpBindingDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  mcp_server_id!: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'Default [] (unrestricted); duplicates removed; names from the server catalog',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TOOL_LIST_MAX_ITEMS)
  @IsString({ each: true })
  @Length(1, TOOL_NAME_MAX_CHARS, { each: true })
  allowed_tools?: string[];

  @ApiPropertyOptional({ type: Object, description: 'Default {}' })
  @IsOptional()
  @IsObject()
  config_override_json?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['enabled', 'disabled'], default: 'enabled' })
  @IsOptional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';
}

/** `PUT /projects/:id/settings/tool-policy-overrides`. */
export class PutToolPolicyOverrideDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  base_policy_id!: string;

  @ApiPropertyOptional({ type: Object, description: 'Default {}. Keys: mode (allow/deny), tools (string[])' })
  @IsOptional()
  @IsObject()
  override_json?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['active', 'archived'], default: 'active' })
  @IsOptional()
  @IsIn(['active', 'archived'])
  status?: 'active' | 'archived';
}
