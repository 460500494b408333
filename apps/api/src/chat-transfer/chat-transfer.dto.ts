import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, Length, Matches, ValidateIf } from 'class-validator';
import { CHAT_FORMATS, CHAT_TITLE_MAX, type ChatFormat } from '@hearth/app';
import { QueryBool } from '../http/query-boolean';

const NOT_BLANK = /\S/;
/** Optional, and `null` counts as absent. */
const Optional = () => ValidateIf((_o, v) => v !== undefined && v !== null);

/** `POST /import/chat` and `POST /import/chat/jobs` (JSON only). */
export class ImportChatDto {
  @ApiProperty({ description: 'The chat file text (nchat JSON or ext_jsonl lines)' })
  @IsString()
  data!: string;

  @ApiPropertyOptional({ nullable: true })
  @Optional()
  @IsString()
  @Length(1, 200)
  character_id?: string | null;

  @ApiPropertyOptional({ nullable: true, maxLength: CHAT_TITLE_MAX })
  @Optional()
  @IsString()
  @Length(1, CHAT_TITLE_MAX)
  @Matches(NOT_BLANK, { message: 'title must not be blank' })
  title?: string | null;
}

export class ChatSessionIdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}

export class ChatTransferJobIdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}

/** `GET /export/chat/:id` query. */
export class ExportChatQueryDto {
  @ApiPropertyOptional({ enum: CHAT_FORMATS, default: 'nchat' })
  @IsOptional()
  @IsIn(CHAT_FORMATS)
  format?: ChatFormat;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @QueryBool()
  @IsBoolean()
  include_variables?: boolean;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @QueryBool()
  @IsBoolean()
  include_memories?: boolean;
}

/** `POST /export/chat/:id/jobs` body. */
export class ExportChatJobDto {
  @ApiPropertyOptional({ enum: CHAT_FORMATS, default: 'nchat' })
  @IsOptional()
  @IsIn(CHAT_FORMATS)
  format?: ChatFormat;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  include_variables?: boolean;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  include_memories?: boolean;
}
