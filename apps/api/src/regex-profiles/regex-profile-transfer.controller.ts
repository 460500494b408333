import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ExportRegexProfileUseCase, ImportRegexProfileUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope, Raw } from '../http/envelope';
import { sendAsJsonFile } from '../presets/export-file';
import { AssetIdParamDto } from '../presets/presets.dto';
import { RegexProfileBodyDto, toRegexProfileSummary } from './regex-profiles.dto';

/** `POST /import/regex` (201 `{data}` with `script_count` and `compat_report`) and `GET /export/regex/:id` (a JSON array file). */
@ApiTags('regex profiles')
@Envelope('data')
@Controller()
export class RegexProfileTransferController {
  constructor(
    private readonly importProfile: ImportRegexProfileUseCase,
    private readonly exportProfile: ExportRegexProfileUseCase,
  ) {}

  @Post('import/regex')
  async import(@CurrentActor() actor: Actor, @Body() body: RegexProfileBodyDto) {
    return toRegexProfileSummary(await this.importProfile.execute(actor, body));
  }

  @Get('export/regex/:id')
  async export(
    @CurrentActor() actor: Actor,
    @Param() { id }: AssetIdParamDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { name, file } = await this.exportProfile.execute(actor, id);
    sendAsJsonFile(res, name);
    return new Raw(file);
  }
}
