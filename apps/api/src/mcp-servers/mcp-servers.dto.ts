import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import {
  MCP_URL_MAX_CHARS,
  REGISTRY_NAME_MAX_CHARS,
  TOOL_LIST_MAX_ITEMS,
  TOOL_NAME_MAX_CHARS,
} from '@hearth/domain';
import type { McpServerRow } from '@hearth/persistence';

// eslint-disable-next-line no-control-regex -- names must be non-blank and free of NUL
const NAME = /^(?=[\s\S]*\S)[^\u0000]*$/;
const NAME_MESSAGE = { message: 'name must not be blank or contain NUL characters' };

/** `GET /mcp-servers` takes no query parameters (any given is an unknown field: 400). */
export class ListMcpServersQueryDto {}

/** `POST /mcp-servers`. The URL and the catalog's uniqueness are judged by the settings rules. */
export class CreateMcpServerDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: REGISTRY_NAME_MAX_CHARS })
  @IsString()
  @Length(1, REGISTRY_NAME_MAX_CHARS)
  @Matches(NAME, NAME_MESSAGE)
  name!: string;

  @ApiProperty({ type: String, description: 'http or https URL', maxLength: MCP_URL_MAX_CHARS })
  @IsString()
  url!: string;

  @ApiPropertyOptional({ enum: ['enabled', 'disabled'], default: 'enabled' })
  @IsOptional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';

  @ApiPropertyOptional({
    type: [String],
    description: 'The tool catalog: unique names, at most 200; default []',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TOOL_LIST_MAX_ITEMS)
  @IsString({ each: true })
  @Length(1, TOOL_NAME_MAX_CHARS, { each: true })
  tools?: string[];
}

/** `PATCH /mcp-servers/:id`: at least one field; `tools` replaces the catalog. */
export class UpdateMcpServerDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: REGISTRY_NAME_MAX_CHARS })
  @IsOptional()
  @IsString()
  @Length(1, REGISTRY_NAME_MAX_CHARS)
  @Matches(NAME, NAME_MESSAGE)
  name?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  url?: string;

  @ApiPropertyOptional({ enum: ['enabled', 'disabled'] })
  @IsOptional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TOOL_LIST_MAX_ITEMS)
  @IsString({ each: true })
  @Length(1, TOOL_NAME_MAX_CHARS, { each: true })
  tools?: string[];
}

export const toMcpServerView = (s: McpServerRow) => ({
  id: s.id,
  workspace_id: s.workspace_id,
  name: s.name,
  url: s.url,
  status: s.status,
  tools: s.tools,
  created_at: s.created_at,
  updated_at: s.updated_at,
});
