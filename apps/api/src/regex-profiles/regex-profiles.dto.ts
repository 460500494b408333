import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsOptional, IsString, Length, Matches, ValidateBy } from 'class-validator';
import type { RegexProfileDetail, RegexProfileVersionDetail } from '@hearth/app';
import { compatReport } from '@hearth/domain';
import type { RegexProfileRow } from '@hearth/persistence';
import { LIBRARY_NAME_MAX, toVersionSummary } from '../presets/presets.dto';

const NOT_BLANK = /\S/;

/** `data` of a regex import or update: an array of script objects, or one script object (the codec judges the items). */
const IsScriptList = () =>
  ValidateBy({
    name: 'isScriptList',
    validator: {
      validate: (value: unknown) => typeof value === 'object' && value !== null,
      defaultMessage: () => 'data must be an array of regex script objects or one script object',
    },
  });

/** `POST /import/regex` and `PUT /regex-profiles/:id`. */
export class RegexProfileBodyDto {
  @ApiPropertyOptional({
    type: String,
    minLength: 1,
    maxLength: LIBRARY_NAME_MAX,
    description:
      "Default: the first script's scriptName, else 'Unnamed Regex Profile' (import); the current name (update)",
  })
  @IsOptional()
  @IsString()
  @Length(1, LIBRARY_NAME_MAX)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name?: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    description: 'ST regex scripts (one object is accepted)',
  })
  @IsDefined()
  @IsScriptList()
  data!: unknown;
}

export const toRegexProfileSummary = (p: RegexProfileRow) => ({
  id: p.id,
  name: p.name,
  source: p.source,
  version_no: p.version_no,
  latest_version_id: p.latest_version_id,
  script_count: p.script_count,
  compat_report: p.compat_report,
  created_at: p.created_at,
  updated_at: p.updated_at,
});

export const toRegexProfileDetail = (d: RegexProfileDetail) => ({
  ...toRegexProfileSummary(d.profile),
  data: d.data,
});

export const toRegexProfileVersionDetail = (d: RegexProfileVersionDetail) => ({
  ...toVersionSummary(d.version),
  script_count: d.data.length,
  compat_report: compatReport(d.data),
  data: d.data,
});
