import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { CLIENT_DATA_LIMITS, REPLAY_POLICIES, STORABLE_TEXT, type ReplayPolicy } from '@hearth/domain';
import type { ClientDataNamespaceDetail, FloorSessionStateWrite, SessionStateView } from '@hearth/app';
import type { ClientDataNamespaceRow } from '@hearth/persistence';

const ID_MAX = 200;
const NAME_MESSAGE = {
  message: 'name must start with a lowercase letter, then at most 63 of a-z, 0-9, _, . and -',
};
const STORABLE_TEXT_MESSAGE = {
  message: '$property must not contain NUL characters or unpaired UTF-16 surrogates',
};
/** A field given (null included), so that `null` for a non-nullable field is refused, not skipped. */
const given = (field: string) => (o: object) => (o as Record<string, unknown>)[field] !== undefined;

const DESCRIPTION = {
  type: String,
  nullable: true,
  maxLength: CLIENT_DATA_LIMITS.descriptionMaxChars,
  description: 'Free text for people; null clears it',
};
const REPLAY_POLICY = {
  enum: REPLAY_POLICIES,
  description:
    'What a retry of a floor that wrote in the namespace needs: nothing (replay), the write ids confirmed (confirm), or it is refused (block)',
};
const MAX_ITEMS = {
  type: 'integer' as const,
  minimum: 1,
  maximum: CLIENT_DATA_LIMITS.maxItemsCeiling,
  description: 'Most present slots a session state may hold in the namespace at one floor',
};
const MAX_BYTES = {
  type: 'integer' as const,
  minimum: 1,
  maximum: CLIENT_DATA_LIMITS.maxBytesCeiling,
  description: 'Most value bytes (UTF-8 of the JSON) those slots may hold together',
};

/** The changeable settings of a namespace (create and PATCH). */
class ClientDataNamespaceSettingsDto {
  @ApiPropertyOptional(DESCRIPTION)
  @IsOptional()
  @IsString()
  @MaxLength(CLIENT_DATA_LIMITS.descriptionMaxChars)
  @Matches(STORABLE_TEXT, STORABLE_TEXT_MESSAGE)
  description?: string | null;

  @ApiPropertyOptional(REPLAY_POLICY)
  @ValidateIf(given('replay_policy'))
  @IsIn(REPLAY_POLICIES)
  replay_policy?: ReplayPolicy;

  @ApiPropertyOptional(MAX_ITEMS)
  @ValidateIf(given('max_items'))
  @IsInt()
  @Min(1)
  @Max(CLIENT_DATA_LIMITS.maxItemsCeiling)
  max_items?: number;

  @ApiPropertyOptional(MAX_BYTES)
  @ValidateIf(given('max_bytes'))
  @IsInt()
  @Min(1)
  @Max(CLIENT_DATA_LIMITS.maxBytesCeiling)
  max_bytes?: number;
}

/** `POST /client-data/namespaces`: defaults replay, 1000 items, 1 MiB. */
export class CreateClientDataNamespaceDto extends ClientDataNamespaceSettingsDto {
  @ApiProperty({
    type: String,
    pattern: CLIENT_DATA_LIMITS.namespaceName.source,
    maxLength: 64,
    description: 'Unique in the account; `game_state` is reserved',
  })
  @IsString()
  @Matches(CLIENT_DATA_LIMITS.namespaceName, NAME_MESSAGE)
  name!: string;
}

/** `PATCH /client-data/namespaces/:name`: at least one field; the name is not changeable. */
export class UpdateClientDataNamespaceDto extends ClientDataNamespaceSettingsDto {}

/** `GET /client-data/namespaces` and `GET /client-data/usage` take no query parameters. */
export class NoQueryDto {}

/** `GET /sessions/:id/state`: `branch_id` or `floor_id` (not both); default the head of `main`. */
export class SessionStateQueryDto {
  @ApiPropertyOptional({ type: String, description: 'A branch id, or `main`; default main' })
  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  branch_id?: string;

  @ApiPropertyOptional({ type: String, description: 'A floor of the session; excludes branch_id' })
  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  floor_id?: string;

  @ApiPropertyOptional({ type: String, description: 'Only this namespace (unregistered: no items)' })
  @IsOptional()
  @IsString()
  @Length(1, 128)
  namespace?: string;
}

export const toClientDataNamespaceView = (n: ClientDataNamespaceRow) => ({
  id: n.id,
  name: n.name,
  description: n.description,
  replay_policy: n.replay_policy,
  max_items: n.max_items,
  max_bytes: n.max_bytes,
  created_at: n.created_at,
  updated_at: n.updated_at,
});

export const toClientDataNamespaceDetailView = (d: ClientDataNamespaceDetail) => ({
  ...toClientDataNamespaceView(d.namespace),
  usage: d.usage,
});

export const toSessionStateView = (s: SessionStateView) => ({
  session_id: s.session_id,
  branch_id: s.branch_id,
  floor_id: s.floor_id,
  floor_no: s.floor_no,
  items: s.items.map((i) => ({
    namespace: i.namespace,
    slot: i.slot,
    value: i.value,
    mutation_id: i.mutation_id,
    floor_id: i.floor_id,
    floor_no: i.floor_no,
    updated_at: i.updated_at,
  })),
});

export const toFloorSessionStateWriteView = (w: FloorSessionStateWrite) => ({
  id: w.id,
  namespace: w.namespace,
  slot: w.slot,
  present: w.present,
  value: w.value,
  seq: w.seq,
  replay_policy: w.replay_policy,
  created_at: w.created_at,
});
