import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ExportPresetUseCase, ImportPresetUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope, Raw } from '../http/envelope';
import { sendAsJsonFile } from './export-file';
import { AssetIdParamDto, PresetBodyDto, toPresetSummary } from './presets.dto';

/** `POST /import/preset` (201 `{data}`) and `GET /export/preset/:id` (a JSON file download). */
@ApiTags('presets')
@Envelope('data')
@Controller()
export class PresetTransferController {
  constructor(
    private readonly importPreset: ImportPresetUseCase,
    private readonly exportPreset: ExportPresetUseCase,
  ) {}

  @Post('import/preset')
  async import(@CurrentActor() actor: Actor, @Body() body: PresetBodyDto) {
    return toPresetSummary(await this.importPreset.execute(actor, body));
  }

  @Get('export/preset/:id')
  async export(
    @CurrentActor() actor: Actor,
    @Param() { id }: AssetIdParamDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { name, file } = await this.exportPreset.execute(actor, id);
    sendAsJsonFile(res, name);
    return new Raw(file);
  }
}
