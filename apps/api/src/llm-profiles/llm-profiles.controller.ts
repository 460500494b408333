import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ActivateLlmProfileUseCase,
  CreateLlmProfileUseCase,
  DeleteLlmProfileUseCase,
  DiscoverModelsUseCase,
  GetLlmInstancesUseCase,
  GetLlmProfileUseCase,
  GetLlmRuntimeUseCase,
  ListLlmProfilesUseCase,
  TestModelUseCase,
  UnbindLlmProfileUseCase,
  UpdateLlmProfileUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  ActivateLlmProfileDto,
  CreateLlmProfileDto,
  DiscoverModelsDto,
  ListLlmProfilesQueryDto,
  SessionQueryDto,
  SlotParamDto,
  TestModelDto,
  toLlmProfileView,
  UnbindQueryDto,
  UpdateLlmProfileDto,
} from './llm-profiles.dto';

/** Spec 2 "LLM Profiles" (docs/decisions.md "Model profiles"), in `{data}`. */
@ApiTags('llm profiles')
@Envelope('data')
@Controller('llm-profiles')
export class LlmProfilesController {
  constructor(
    private readonly createProfile: CreateLlmProfileUseCase,
    private readonly listProfiles: ListLlmProfilesUseCase,
    private readonly getProfile: GetLlmProfileUseCase,
    private readonly updateProfile: UpdateLlmProfileUseCase,
    private readonly deleteProfile: DeleteLlmProfileUseCase,
    private readonly activateProfile: ActivateLlmProfileUseCase,
    private readonly unbindProfile: UnbindLlmProfileUseCase,
    private readonly runtime: GetLlmRuntimeUseCase,
    private readonly discoverModels: DiscoverModelsUseCase,
    private readonly testModel: TestModelUseCase,
  ) {}

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateLlmProfileDto) {
    return toLlmProfileView(await this.createProfile.execute(actor, body));
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: ListLlmProfilesQueryDto) {
    const items = (await this.listProfiles.execute(actor, query)).map(toLlmProfileView);
    return new DataList(items, { total: items.length });
  }

  @Get('runtime')
  async resolved(@CurrentActor() actor: Actor, @Query() query: SessionQueryDto) {
    return this.runtime.execute(actor, query.session_id ?? null);
  }

  @Post('models/discover')
  @HttpCode(200)
  async discover(@CurrentActor() actor: Actor, @Body() body: DiscoverModelsDto) {
    return this.discoverModels.execute(actor, body);
  }

  @Post('models/test')
  @HttpCode(200)
  async test(@CurrentActor() actor: Actor, @Body() body: TestModelDto) {
    return this.testModel.execute(actor, body);
  }

  @Delete('bindings/:slot')
  async unbind(
    @CurrentActor() actor: Actor,
    @Param() { slot }: SlotParamDto,
    @Query() query: UnbindQueryDto,
  ) {
    return this.unbindProfile.execute(actor, slot, query);
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return toLlmProfileView(await this.getProfile.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto, @Body() body: UpdateLlmProfileDto) {
    return toLlmProfileView(await this.updateProfile.execute(actor, id, body));
  }

  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param() { id }: IdParamDto) {
    return this.deleteProfile.execute(actor, id);
  }

  @Post(':id/activate')
  @HttpCode(200)
  async activate(
    @CurrentActor() actor: Actor,
    @Param() { id }: IdParamDto,
    @Body() body: ActivateLlmProfileDto,
  ) {
    return this.activateProfile.execute(actor, id, body);
  }
}

/** `GET /llm-instances/resolved` (spec 2 "Instance-side resolution"), in `{data}`. */
@ApiTags('llm profiles')
@Envelope('data')
@Controller('llm-instances')
export class LlmInstancesController {
  constructor(private readonly instances: GetLlmInstancesUseCase) {}

  @Get('resolved')
  async resolved(@CurrentActor() actor: Actor, @Query() query: SessionQueryDto) {
    return this.instances.execute(actor, query.session_id ?? null);
  }
}
