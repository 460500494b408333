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
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { storedCardOf, type CharacterWithVersion, type CharacterLorebook } from '@hearth/app';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type NormalizedWorldbookEntry } from '@hearth/domain';
import type { AssetVersionRow, CharacterRow, SessionRow } from '@hearth/persistence';

// eslint-disable-next-line no-control-regex -- titles must be non-blank and free of NUL
const TITLE = /^(?=[\s\S]*\S)[^\u0000]*$/;

/** `:id` of a character. */
export class CharacterIdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}

export class CharacterVersionParamDto extends CharacterIdParamDto {
  @IsString()
  @Length(1, 200)
  version_id!: string;
}

/**
 * `POST /import/character` as JSON (`payload` or `png_base64`) or multipart/form-data (field `file`, plus
 * `create_session` `true`/`false` and `title` form fields). Exactly one card source per request.
 */
export class ImportCharacterDto {
  @ApiPropertyOptional({ type: Object, description: 'legacy flat card, chara_card_v2 or chara_card_v3' })
  @IsOptional()
  @IsObject()
  payload?: Record<string, unknown>;

  /** null is not a PNG (400), not an absent field. */
  @ApiPropertyOptional({ type: String, description: 'a PNG card file, base64 (at most 5 MiB decoded)' })
  @ValidateIf((o: ImportCharacterDto) => o.png_base64 !== undefined)
  @IsString()
  @Matches(/^[A-Za-z0-9+/\s]*={0,2}\s*$/, { message: 'png_base64 must be base64 text' })
  png_base64?: string;

  @ApiPropertyOptional({ type: Boolean, default: true })
  @IsOptional()
  @IsBoolean()
  create_session?: boolean;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(TITLE, { message: 'title must not be blank or contain NUL characters' })
  title?: string;
}

export class ExportCharacterQueryDto {
  @IsOptional()
  @IsIn(['v2', 'v3'])
  format: 'v2' | 'v3' = 'v2';

  @IsOptional()
  @IsString()
  @Length(1, 200)
  version_id?: string;
}

export class ListCharactersQueryDto {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset: number = 0;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @IsOptional()
  @IsIn(['updated_at', 'created_at', 'name'])
  sort_by: 'updated_at' | 'created_at' | 'name' = 'updated_at';

  @IsOptional()
  @IsIn(['asc', 'desc'])
  sort_order: 'asc' | 'desc' = 'desc';
}

export class VersionPageQueryDto {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset: number = 0;
}

export class LorebookQueryDto {
  @IsOptional()
  @IsString()
  @Length(1, 200)
  version_id?: string;
}

export class RollbackCharacterDto {
  @ApiProperty({ type: String })
  @IsString()
  @Length(1, 200)
  version_id!: string;
}

/** The card `data` fields a PATCH may replace; each is checked by type, unknown ones are refused. */
export class CharacterDataPatchDto {
  @IsOptional() @IsString() @MinLength(1) name?: string;
  @IsOptional() @IsString() description?: string;
  @IsOptional() @IsString() personality?: string;
  @IsOptional() @IsString() scenario?: string;
  @IsOptional() @IsString() first_mes?: string;
  @IsOptional() @IsString() mes_example?: string;
  @IsOptional() @IsString() creator_notes?: string;
  @IsOptional() @IsString() system_prompt?: string;
  @IsOptional() @IsString() post_history_instructions?: string;
  @IsOptional() @IsString() creator?: string;
  @IsOptional() @IsString() character_version?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) alternate_greetings?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) tags?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) group_only_greetings?: string[];
  @IsOptional() @IsObject() extensions?: Record<string, unknown>;
  /** The embedded lorebook (`{entries: [...]}`), replaced whole; null removes it. */
  @IsOptional() @IsObject() character_book?: Record<string, unknown> | null;
  @IsOptional() @IsString() nickname?: string;
  @IsOptional() @IsObject() creator_notes_multilingual?: Record<string, unknown>;
  @IsOptional() @IsArray() @IsString({ each: true }) source?: string[];
  @IsOptional() @IsArray() assets?: unknown[];
  @IsOptional() @IsInt() creation_date?: number;
  @IsOptional() @IsInt() modification_date?: number;
}

export class UpdateCharacterDto {
  @ApiProperty({ type: Object, description: 'card data fields to replace' })
  @IsObject()
  @ValidateNested()
  @Type(() => CharacterDataPatchDto)
  data!: CharacterDataPatchDto;
}

/** The head-row summary of library conventions. */
export const toCharacterSummary = (c: CharacterRow) => ({
  id: c.id,
  name: c.name,
  source: c.source,
  source_format: c.source_format,
  version_no: c.version_no,
  latest_version_id: c.latest_version_id,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

/** Detail: the summary plus the card of the latest version (or of the version given). */
export const toCharacterDetail = ({ character, version }: CharacterWithVersion) => {
  const card = storedCardOf(version);
  return {
    ...toCharacterSummary(character),
    spec: card.source_format,
    spec_version: card.source_spec_version,
    data: card.data,
  };
};

export const toVersionSummary = (v: Omit<AssetVersionRow, 'payload'>) => ({
  id: v.id,
  version_no: v.version_no,
  name: v.name,
  change_kind: v.change_kind,
  source_format: v.source_format,
  created_by_operation_id: v.created_by_operation_id,
  created_at: v.created_at,
});

export const toVersionDetail = ({ character, version }: CharacterWithVersion) => ({
  ...toVersionSummary(version),
  character_id: character.id,
  payload: version.payload,
});

/** A normalised lorebook entry without the raw ST entry. */
const toLorebookEntry = ({ raw: _raw, ...entry }: NormalizedWorldbookEntry) => entry;

export const toLorebookView = ({ character, version, book }: CharacterLorebook) => ({
  character_id: character.id,
  character_version_id: version.id,
  name: book?.name ?? null,
  has_book: book !== null,
  entries: book ? book.entries.map(toLorebookEntry) : [],
});

export const toImportedSession = (session: SessionRow, card: CharacterWithVersion) => {
  const data = storedCardOf(card.version).data;
  return {
    id: session.id,
    title: session.title,
    status: session.status,
    character_binding: {
      character_id: card.character.id,
      character_version_id: card.version.id,
      sync_policy: 'pin' as const,
      snapshot_summary: {
        name: data.name,
        creator: data.creator,
        character_version: data.character_version,
        tags: data.tags,
        source_format: card.version.source_format,
      },
    },
    created_at: session.created_at,
    updated_at: session.updated_at,
  };
};
