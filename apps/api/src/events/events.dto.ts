import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { STORABLE_TEXT } from '@hearth/domain';

const STORABLE = { message: '$property must not contain NUL characters or unpaired UTF-16 surrogates' };

/** Filters shared by the event query and the event stream (spec 1 "Projects"). */
export class ProjectEventStreamQueryDto {
  @ApiPropertyOptional({
    description: 'Return events with a sequence greater than this',
    default: 0,
    minimum: 0,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  after?: number;

  @ApiPropertyOptional({
    description: 'Comma-separated event kinds, for example `session.archived,floor.committed`',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @Matches(STORABLE_TEXT, STORABLE)
  types?: string;

  @ApiPropertyOptional({ description: 'Only events of this session; it must belong to the Project' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(STORABLE_TEXT, STORABLE)
  session_id?: string;
}

export class ProjectEventQueryDto extends ProjectEventStreamQueryDto {
  @ApiPropertyOptional({ description: 'Page size', default: 100, minimum: 1, maximum: 500 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}
