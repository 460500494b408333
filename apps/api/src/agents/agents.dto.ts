import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { AGENT_JOB_LIST_MAX_LIMIT, AGENT_JOB_STATUSES, type AgentJobStatus } from '@hearth/app';
import {
  AGENT_SCOPE_KINDS,
  AGENT_TYPE_KEY_MAX_CHARS,
  AGENT_TYPE_NAME_MAX_CHARS,
  STORABLE_TEXT,
  type AgentScopeKind,
} from '@hearth/domain';

/** Names, keys and reasons must be text Postgres stores as given (`STORABLE_TEXT`). */
const STORABLE_TEXT_MESSAGE = {
  message: '$property must not contain NUL characters or unpaired UTF-16 surrogates',
};
const given = (field: string) => (o: object) => (o as Record<string, unknown>)[field] !== undefined;

/** `trigger_reason` of a manual run: at most 500 characters (docs/decisions.md "Agents"). */
export const AGENT_RUN_TRIGGER_REASON_MAX_CHARS = 500;

const DEFAULTS_DOC = {
  type: Object,
  description:
    'llm_profile_id, tool_policy_id, mcp_bindings, event_subscriptions, grants, metadata; omitted fields take empty defaults',
};

/** `POST /workspaces/:id/agent-types`. */
export class CreateAgentTypeDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: AGENT_TYPE_KEY_MAX_CHARS })
  @IsString()
  @Length(1, AGENT_TYPE_KEY_MAX_CHARS)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  key!: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: AGENT_TYPE_NAME_MAX_CHARS })
  @IsString()
  @Length(1, AGENT_TYPE_NAME_MAX_CHARS)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  name!: string;

  @ApiProperty({ enum: AGENT_SCOPE_KINDS })
  @IsIn(AGENT_SCOPE_KINDS)
  scope_kind!: AgentScopeKind;

  @ApiPropertyOptional(DEFAULTS_DOC)
  @IsOptional()
  @IsObject()
  defaults?: Record<string, unknown>;
}

/** `PATCH /workspaces/:id/agent-types/:agent_type_id`: `key` and `scope_kind` are not changeable. */
export class UpdateAgentTypeDto {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: AGENT_TYPE_NAME_MAX_CHARS })
  @ValidateIf(given('name'))
  @IsString()
  @Length(1, AGENT_TYPE_NAME_MAX_CHARS)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  name?: string;

  @ApiPropertyOptional({ enum: ['active', 'disabled'] })
  @ValidateIf(given('status'))
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';

  @ApiPropertyOptional({
    ...DEFAULTS_DOC,
    description: `Replaces the whole object. ${DEFAULTS_DOC.description}`,
  })
  @ValidateIf(given('defaults'))
  @IsObject()
  defaults?: Record<string, unknown>;
}

const ID = { type: String, nullable: true, description: 'null: inherit the Agent Type’s default' };
const LIST = {
  type: [Object] as [ObjectConstructor],
  nullable: true,
  description: 'Narrowing only; null: inherit the Agent Type’s',
};

/** The writable fields of a binding (create and PATCH). */
class AgentBindingFieldsDto {
  @ApiPropertyOptional({ enum: AGENT_SCOPE_KINDS, description: 'Default: the Agent Type’s; never wider' })
  @ValidateIf(given('scope_kind'))
  @IsIn(AGENT_SCOPE_KINDS)
  scope_kind?: AgentScopeKind;

  @ApiPropertyOptional(ID)
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  llm_profile_id?: string | null;

  @ApiPropertyOptional(ID)
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  tool_policy_id?: string | null;

  @ApiPropertyOptional(LIST)
  @IsOptional()
  @IsArray()
  mcp_bindings?: unknown[] | null;

  @ApiPropertyOptional(LIST)
  @IsOptional()
  @IsArray()
  event_subscriptions?: unknown[] | null;

  @ApiPropertyOptional({ type: Object, nullable: true, description: 'Narrowing only; null: inherit' })
  @IsOptional()
  @IsObject()
  grants?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    type: Object,
    description: 'The binding’s own keys over the type’s metadata; default {}',
  })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown> | null;
}

/** `POST /projects/:id/agent-bindings`. */
export class CreateAgentBindingDto extends AgentBindingFieldsDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, 200)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  agent_type_id!: string;
}

/** `PATCH /projects/:id/agent-bindings/:binding_id`: only the given fields change. */
export class UpdateAgentBindingDto extends AgentBindingFieldsDto {
  @ApiPropertyOptional({ enum: ['enabled', 'disabled'], description: '`error` is set by the service only' })
  @ValidateIf(given('status'))
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';
}

/** `POST /projects/:id/agent-bindings/:binding_id/run` (every field optional). */
export class RunAgentBindingDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: AGENT_RUN_TRIGGER_REASON_MAX_CHARS })
  @IsOptional()
  @IsString()
  @MaxLength(AGENT_RUN_TRIGGER_REASON_MAX_CHARS)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  trigger_reason?: string | null;

  @ApiPropertyOptional({ type: Boolean, default: true })
  @ValidateIf(given('dry_run'))
  @IsBoolean()
  dry_run?: boolean;

  @ApiPropertyOptional({
    type: Object,
    description: 'Default {}; at most 64 KiB. session_id / floor_id place session- and floor-scoped runs',
  })
  @ValidateIf(given('input_json'))
  @IsObject()
  input_json?: Record<string, unknown>;
}

/** `GET /projects/:id/agent-jobs`. */
export class ListAgentJobsQueryDto {
  @ApiPropertyOptional({ enum: AGENT_JOB_STATUSES })
  @IsOptional()
  @IsIn(AGENT_JOB_STATUSES)
  status?: AgentJobStatus;

  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: AGENT_JOB_LIST_MAX_LIMIT, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(AGENT_JOB_LIST_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ type: Number, minimum: 0, default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  offset?: number;
}
