import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  DeleteRegexProfileUseCase,
  GetRegexProfileUseCase,
  GetRegexProfileVersionUseCase,
  ListRegexProfilesUseCase,
  ListRegexProfileVersionsUseCase,
  RollbackRegexProfileUseCase,
  UpdateRegexProfileUseCase,
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
  RollbackDto,
  toListInput,
  toVersionSummary,
  versionListMeta,
} from '../presets/presets.dto';
import {
  RegexProfileBodyDto,
  toRegexProfileDetail,
  toRegexProfileSummary,
  toRegexProfileVersionDetail,
} from './regex-profiles.dto';

/** Regex profile management (library conventions): list, detail, versions, update = new version, rollback, soft delete. */
@ApiTags('regex profiles')
@Envelope('data')
@Controller('regex-profiles')
export class RegexProfilesController {
  constructor(
    private readonly listProfiles: ListRegexProfilesUseCase,
    private readonly getProfile: GetRegexProfileUseCase,
    private readonly listVersions: ListRegexProfileVersionsUseCase,
    private readonly getVersion: GetRegexProfileVersionUseCase,
    private readonly updateProfile: UpdateRegexProfileUseCase,
    private readonly rollbackProfile: RollbackRegexProfileUseCase,
    private readonly deleteProfile: DeleteRegexProfileUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: LibraryListQueryDto) {
    const result = await this.listProfiles.execute(actor, toListInput(query));
    return new DataList(
      result.rows.map(toRegexProfileSummary),
      listMeta(result.query, result.total, result.rows.length),
    );
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto) {
    return toRegexProfileDetail(await this.getProfile.execute(actor, id));
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
    return toRegexProfileVersionDetail(await this.getVersion.execute(actor, params.id, params.version_id));
  }

  @Put(':id')
  async update(
    @CurrentActor() actor: Actor,
    @Param() { id }: AssetIdParamDto,
    @Body() body: RegexProfileBodyDto,
  ) {
    return toRegexProfileDetail(await this.updateProfile.execute(actor, id, body));
  }

  @Post(':id/rollback')
  @HttpCode(200)
  async rollback(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto, @Body() body: RollbackDto) {
    return toRegexProfileDetail(await this.rollbackProfile.execute(actor, id, body.version_id));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: AssetIdParamDto) {
    return this.deleteProfile.execute(actor, id);
  }
}
