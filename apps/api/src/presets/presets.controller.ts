import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  DeletePresetUseCase,
  GetPresetUseCase,
  GetPresetVersionUseCase,
  ListPresetsUseCase,
  ListPresetVersionsUseCase,
  RollbackPresetUseCase,
  UpdatePresetUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  AssetIdParamDto,
  AssetVersionParamDto,
  LibraryListQueryDto,
  LibraryPageQueryDto,
  listMeta,
  PresetBodyDto,
  RollbackDto,
  toListInput,
  toPresetDetail,
  toPresetSummary,
  toPresetVersionDetail,
  toVersionSummary,
  versionListMeta,
} from './presets.dto';

/** Preset management (library conventions): list, detail, versions, update = new version, rollback, soft delete. */
@ApiTags('presets')
@Envelope('data')
@Controller('presets')
export class PresetsController {
  constructor(
    private readonly listPresets: ListPresetsUseCase,
    private readonly getPreset: GetPresetUseCase,
    private readonly listVersions: ListPresetVersionsUseCase,
    private readonly getVersion: GetPresetVersionUseCase,
    private readonly updatePreset: UpdatePresetUseCase,
    private readonly rollbackPreset: RollbackPresetUseCase,
    private readonly deletePreset: DeletePresetUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: LibraryListQueryDto) {
    const result = await this.listPresets.execute(actor, toListInput(query));
    return new DataList(
      result.rows.map(toPresetSummary),
      listMeta(result.query, result.total, result.rows.length),
    );
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto) {
    return toPresetDetail(await this.getPreset.execute(actor, id));
  }

  @Get(':id/versions')
  async versions(
    @CurrentActor() actor: Actor,
    @Param() { id }: AssetIdParamDto,
    @Query() query: LibraryPageQueryDto,
  ) {
    const page = await this.listVersions.execute(actor, id, query);
    return new DataList(page.rows.map(toVersionSummary), versionListMeta(page, page.rows.length));
  }

  @Get(':id/versions/:version_id')
  async version(@CurrentActor() actor: Actor, @Param() params: AssetVersionParamDto) {
    return toPresetVersionDetail(await this.getVersion.execute(actor, params.id, params.version_id));
  }

  @Put(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto, @Body() body: PresetBodyDto) {
    return toPresetDetail(await this.updatePreset.execute(actor, id, body));
  }

  @Post(':id/rollback')
  @HttpCode(200)
  async rollback(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto, @Body() body: RollbackDto) {
    return toPresetDetail(await this.rollbackPreset.execute(actor, id, body.version_id));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto) {
    return this.deletePreset.execute(actor, id);
  }
}
