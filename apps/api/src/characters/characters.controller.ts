import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  DeleteCharacterUseCase,
  GetCharacterLorebookUseCase,
  GetCharacterUseCase,
  GetCharacterVersionUseCase,
  ListCharactersUseCase,
  ListCharacterVersionsUseCase,
  RollbackCharacterUseCase,
  UpdateCharacterUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  CharacterIdParamDto,
  CharacterVersionParamDto,
  ListCharactersQueryDto,
  LorebookQueryDto,
  RollbackCharacterDto,
  toCharacterDetail,
  toCharacterSummary,
  toLorebookView,
  toVersionDetail,
  toVersionSummary,
  UpdateCharacterDto,
  VersionPageQueryDto,
} from './characters.dto';

/** Character management (library conventions; docs/decisions.md "Characters"), in `{data}`. */
@ApiTags('characters')
@Envelope('data')
@Controller('characters')
export class CharactersController {
  constructor(
    private readonly listCharacters: ListCharactersUseCase,
    private readonly getCharacter: GetCharacterUseCase,
    private readonly listVersions: ListCharacterVersionsUseCase,
    private readonly getVersion: GetCharacterVersionUseCase,
    private readonly getLorebook: GetCharacterLorebookUseCase,
    private readonly updateCharacter: UpdateCharacterUseCase,
    private readonly rollbackCharacter: RollbackCharacterUseCase,
    private readonly deleteCharacter: DeleteCharacterUseCase,
  ) {}

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: ListCharactersQueryDto) {
    const { rows, total } = await this.listCharacters.execute(actor, {
      q: query.q,
      sortBy: query.sort_by,
      sortOrder: query.sort_order,
      limit: query.limit,
      offset: query.offset,
    });
    return new DataList(rows.map(toCharacterSummary), {
      total,
      limit: query.limit,
      offset: query.offset,
      has_more: query.offset + rows.length < total,
      sort_by: query.sort_by,
      sort_order: query.sort_order,
    });
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: CharacterIdParamDto) {
    return toCharacterDetail(await this.getCharacter.execute(actor, id));
  }

  @Get(':id/versions')
  async versions(
    @CurrentActor() actor: Actor,
    @Param() { id }: CharacterIdParamDto,
    @Query() query: VersionPageQueryDto,
  ) {
    const { rows, total } = await this.listVersions.execute(actor, id, query);
    return new DataList(rows.map(toVersionSummary), {
      total,
      limit: query.limit,
      offset: query.offset,
      has_more: query.offset + rows.length < total,
      sort_by: 'version_no',
      sort_order: 'desc',
    });
  }

  @Get(':id/versions/:version_id')
  async version(@CurrentActor() actor: Actor, @Param() params: CharacterVersionParamDto) {
    return toVersionDetail(await this.getVersion.execute(actor, params.id, params.version_id));
  }

  @Get(':id/lorebook')
  async lorebook(
    @CurrentActor() actor: Actor,
    @Param() { id }: CharacterIdParamDto,
    @Query() query: LorebookQueryDto,
  ) {
    return toLorebookView(await this.getLorebook.execute(actor, id, query.version_id));
  }

  @Patch(':id')
  async update(
    @CurrentActor() actor: Actor,
    @Param() { id }: CharacterIdParamDto,
    @Body() body: UpdateCharacterDto,
  ) {
    return toCharacterDetail(
      await this.updateCharacter.execute(actor, id, { data: definedFields(body.data) }),
    );
  }

  @Post(':id/rollback')
  @HttpCode(200)
  async rollback(
    @CurrentActor() actor: Actor,
    @Param() { id }: CharacterIdParamDto,
    @Body() body: RollbackCharacterDto,
  ) {
    return toCharacterDetail(await this.rollbackCharacter.execute(actor, id, body.version_id));
  }

  /** Soft delete: `{data: {id, deleted: true}}`. */
  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: CharacterIdParamDto) {
    return this.deleteCharacter.execute(actor, id);
  }
}

/** The fields a PATCH named (class instances may carry declared-but-absent fields as undefined). */
function definedFields(data: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined));
}
