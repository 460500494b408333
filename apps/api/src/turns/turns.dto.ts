import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  Equals,
  IsArray,
  IsBoolean,
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
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { STORABLE_TEXT, validationError } from '@hearth/domain';

/** A user message: 1-200,000 characters, not blank. */
export const TURN_MESSAGE_MAX_CHARS = 200_000;
const NOT_BLANK = /\S/;
const NOT_BLANK_MESSAGE = { message: 'the message must not be empty or blank' };
/**
 * The edited text is written only when the retry commits, after the model call: text Postgres cannot
 * store is refused here (a respond's message is written before the call and refused there).
 */
const STORABLE_TEXT_MESSAGE = {
  message: 'the message must not contain NUL characters or unpaired UTF-16 surrogates',
};

/** Generation parameters of the chat routes (docs/decisions.md "Turns and runs"); null = not set. */
export class GenerationParamsDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 2 })
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(2)
  temperature?: number | null;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  @IsOptional()
  @IsNumber()
  @Min(0)
  @Max(1)
  top_p?: number | null;

  @ApiPropertyOptional({ minimum: 0 })
  @IsOptional()
  @IsInt()
  @Min(0)
  top_k?: number | null;

  @ApiPropertyOptional({ minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  max_output_tokens?: number | null;

  @ApiPropertyOptional({ minimum: 1, description: 'Used for prompt history budgeting' })
  @IsOptional()
  @IsInt()
  @Min(1)
  max_context_tokens?: number | null;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  @IsOptional()
  @IsNumber()
  @Min(-2)
  @Max(2)
  frequency_penalty?: number | null;

  @ApiPropertyOptional({ minimum: -2, maximum: 2 })
  @IsOptional()
  @IsNumber()
  @Min(-2)
  @Max(2)
  presence_penalty?: number | null;

  @ApiPropertyOptional({ maxLength: 64, description: '`low`, `medium`, `high` or a model-supported level' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  reasoning_effort?: string | null;

  @ApiPropertyOptional({ type: [String], maxItems: 4 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(4)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  stop?: string[] | null;

  @ApiPropertyOptional({
    minimum: 100,
    maximum: 600000,
    description: 'Upstream timeout (504 generation_timeout)',
  })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(600_000)
  timeout_ms?: number | null;

  @ApiPropertyOptional({ description: 'Ask the provider to stream (default true)' })
  @IsOptional()
  @IsBoolean()
  stream?: boolean | null;
}

export class TurnDebugOptionsDto {
  @IsOptional()
  @IsBoolean()
  include_prompt_snapshot?: boolean;

  @IsOptional()
  @IsBoolean()
  include_runtime_trace?: boolean;

  @IsOptional()
  @IsBoolean()
  include_worldbook_matches?: boolean;
}

/** The fields every chat route shares. Request injections are checked by the turn loader (400 `invalid_injection_payload`). */
export class TurnOptionsDto {
  @ApiPropertyOptional({ type: GenerationParamsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => GenerationParamsDto)
  generation_params?: GenerationParamsDto;

  @ApiPropertyOptional({ type: [Object], description: 'Request-level injections (at most 32)' })
  @IsOptional()
  @IsArray()
  prompt_runtime_injections?: Array<Record<string, unknown>>;

  @ApiPropertyOptional({ type: TurnDebugOptionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => TurnDebugOptionsDto)
  debug_options?: TurnDebugOptionsDto;

  @ApiPropertyOptional({
    description:
      'Keep generating when the client goes away; reattach with GET /runs/:id/events. JSON: 202 with the run.',
  })
  @IsOptional()
  @IsBoolean()
  detach?: boolean;

  @ApiPropertyOptional({ type: Object, description: 'Turn config override (no fields are used yet)' })
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;
}

/**
 * One item of `session_state_writes` (spec 2): a registered custom namespace, a slot, and exactly one
 * of `value` (any JSON) and `delete: true`. Governance fields (`branch_id`, `source_floor_id`,
 * `write_mode`, `replay_safety`) are unknown fields here, so they are refused (400).
 */
export class SessionStateWriteDto {
  @ApiProperty({ minLength: 1, maxLength: 128 })
  @IsString()
  @Length(1, 128)
  namespace!: string;

  @ApiProperty({ minLength: 1, maxLength: 256 })
  @IsString()
  @Length(1, 256)
  slot!: string;

  @ApiPropertyOptional({ description: 'Any JSON value (exactly one of value and delete)' })
  @Allow()
  value?: unknown;

  @ApiPropertyOptional({ description: 'Only true (exactly one of value and delete)' })
  @IsOptional()
  @Equals(true)
  delete?: true;
}

/** `POST /sessions/:id/respond` (and `/respond/stream`). */
export class RespondDto extends TurnOptionsDto {
  @ApiPropertyOptional({
    type: [SessionStateWriteDto],
    description:
      "Session state writes (spec 2) in namespaces registered with POST /client-data/namespaces; they land on the turn's floor when it commits",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => SessionStateWriteDto)
  session_state_writes?: SessionStateWriteDto[];

  @ApiProperty({ minLength: 1, maxLength: TURN_MESSAGE_MAX_CHARS })
  @IsString()
  @Length(1, TURN_MESSAGE_MAX_CHARS)
  @Matches(NOT_BLANK, NOT_BLANK_MESSAGE)
  message!: string;

  @ApiPropertyOptional({ description: 'Default: main' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  branch_id?: string;

  @ApiPropertyOptional({
    description: 'The floor answered; must still be the branch head (409 generation_target_stale)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  source_floor_id?: string;
}

/**
 * What every retry route adds (spec 2 names both lists for temporary conversations' retries): the
 * floor's session state writes the client confirms keeping (docs/decisions.md "Client data and session
 * state"), and tool executions (no tools yet: accepted and unused).
 */
export class RetryOptionsDto extends TurnOptionsDto {
  @ApiPropertyOptional({
    type: [String],
    description: "Ids of the floor's session state writes whose namespace asks for a confirmation",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  confirmed_session_state_mutation_ids?: string[];

  @ApiPropertyOptional({ type: [String], description: 'No tools yet: accepted and unused' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  confirmed_execution_ids?: string[];
}

/** `POST /sessions/:id/regenerate`. */
export class RegenerateDto extends RetryOptionsDto {
  @ApiPropertyOptional({ description: 'Default: main' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  branch_id?: string;
}

/**
 * `POST /floors/:id/retry`. `floor_id` may repeat the path's floor (the temporary-conversation retry
 * body of spec 2 names its floor so); another id is 400 (`retriedFloorId`).
 */
export class RetryFloorDto extends RetryOptionsDto {
  @ApiPropertyOptional({ description: 'The floor of the path, repeated (optional)' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  floor_id?: string;
}

/** `POST /floors/:id/retry-step`. */
export class RetryStepDto extends RetryFloorDto {
  @ApiProperty({ minimum: 1, description: '1-based; a turn without tools has one step' })
  @IsInt()
  @Min(1)
  from_step_index!: number;
}

/**
 * `POST /messages/:id/edit-and-regenerate`: the new text as `content`, or as `message` (the respond
 * body's name for the user text; spec 2 does not show this body). Both given: 400 (`editedText`).
 */
export class EditAndRegenerateDto extends RetryOptionsDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: TURN_MESSAGE_MAX_CHARS,
    description: 'The new text of the user message (or send it as `message`)',
  })
  @ValidateIf((o: EditAndRegenerateDto) => o.content !== undefined || o.message === undefined)
  @IsString()
  @Length(1, TURN_MESSAGE_MAX_CHARS)
  @Matches(NOT_BLANK, NOT_BLANK_MESSAGE)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  content?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: TURN_MESSAGE_MAX_CHARS, description: 'Alias of `content`' })
  @ValidateIf((o: EditAndRegenerateDto) => o.message !== undefined)
  @IsString()
  @Length(1, TURN_MESSAGE_MAX_CHARS)
  @Matches(NOT_BLANK, NOT_BLANK_MESSAGE)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  message?: string;
}

/** The new text of an edit-and-regenerate body: `content` or `message`, never both (400). */
export function editedText(body: EditAndRegenerateDto): string {
  if (body.content !== undefined && body.message !== undefined) {
    throw validationError('Send the new text as content or as message, not both', {
      fields: [{ field: 'message', problems: ['send the new text as content or as message, not both'] }],
    });
  }
  return (body.content ?? body.message)!;
}

/** The floor a retry names: the path's; a body `floor_id` naming another floor is 400. */
export function retriedFloorId(pathId: string, body: RetryFloorDto): string {
  if (body.floor_id !== undefined && body.floor_id !== pathId) {
    throw validationError('floor_id must be the floor of the path', {
      fields: [{ field: 'floor_id', problems: ['floor_id must be the floor of the path'] }],
    });
  }
  return pathId;
}

export const isEventStream = (accept: string | undefined) => /text\/event-stream/i.test(accept ?? '');
