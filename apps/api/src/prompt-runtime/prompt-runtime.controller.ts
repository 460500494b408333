import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreatePromptInjectionUseCase,
  DeletePromptInjectionUseCase,
  GetPromptPolicyUseCase,
  ListPromptInjectionsUseCase,
  UpdatePromptInjectionUseCase,
  UpdatePromptPolicyUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  CreatePromptInjectionDto,
  toPromptInjectionView,
  UpdatePromptInjectionDto,
  UpdatePromptPolicyDto,
} from './prompt-runtime.dto';

/**
 * Spec 2 "Prompt runtime policy" and "Persistent injections", at session level and on materialised
 * branches (docs/decisions.md "Prompt runtime policy and injections"), in `{data}`.
 */
@ApiTags('prompt runtime')
@Envelope('data')
@Controller('sessions/:id/prompt-runtime')
export class PromptRuntimeController {
  constructor(
    private readonly getPolicy: GetPromptPolicyUseCase,
    private readonly updatePolicy: UpdatePromptPolicyUseCase,
    private readonly listInjections: ListPromptInjectionsUseCase,
    private readonly createInjection: CreatePromptInjectionUseCase,
    private readonly updateInjection: UpdatePromptInjectionUseCase,
    private readonly deleteInjection: DeletePromptInjectionUseCase,
  ) {}

  @Get('policy')
  sessionPolicy(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.getPolicy.execute(actor, id, null);
  }

  @Patch('policy')
  patchSessionPolicy(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: UpdatePromptPolicyDto,
  ) {
    return this.updatePolicy.execute(actor, id, null, body);
  }

  @Get('branches/:branchId/policy')
  branchPolicy(@CurrentActor() actor: Actor, @Param('id') id: string, @Param('branchId') branchId: string) {
    return this.getPolicy.execute(actor, id, branchId);
  }

  @Patch('branches/:branchId/policy')
  patchBranchPolicy(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('branchId') branchId: string,
    @Body() body: UpdatePromptPolicyDto,
  ) {
    return this.updatePolicy.execute(actor, id, branchId, body);
  }

  @Get('injections')
  sessionInjections(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.list(actor, id, null);
  }

  @Post('injections')
  createSessionInjection(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() body: CreatePromptInjectionDto,
  ) {
    return this.create(actor, id, null, body);
  }

  @Patch('injections/:injectionId')
  patchSessionInjection(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('injectionId') injectionId: string,
    @Body() body: UpdatePromptInjectionDto,
  ) {
    return this.update(actor, id, null, injectionId, body);
  }

  @Delete('injections/:injectionId')
  deleteSessionInjection(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('injectionId') injectionId: string,
  ) {
    return this.remove(actor, id, null, injectionId);
  }

  @Get('branches/:branchId/injections')
  branchInjections(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('branchId') branchId: string,
  ) {
    return this.list(actor, id, branchId);
  }

  @Post('branches/:branchId/injections')
  createBranchInjection(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('branchId') branchId: string,
    @Body() body: CreatePromptInjectionDto,
  ) {
    return this.create(actor, id, branchId, body);
  }

  @Patch('branches/:branchId/injections/:injectionId')
  patchBranchInjection(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('branchId') branchId: string,
    @Param('injectionId') injectionId: string,
    @Body() body: UpdatePromptInjectionDto,
  ) {
    return this.update(actor, id, branchId, injectionId, body);
  }

  @Delete('branches/:branchId/injections/:injectionId')
  deleteBranchInjection(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('branchId') branchId: string,
    @Param('injectionId') injectionId: string,
  ) {
    return this.remove(actor, id, branchId, injectionId);
  }

  private async list(actor: Actor, id: string, branchId: string | null) {
    const items = (await this.listInjections.execute(actor, id, branchId)).map(toPromptInjectionView);
    return new DataList(items, { total: items.length });
  }

  private async create(actor: Actor, id: string, branchId: string | null, body: CreatePromptInjectionDto) {
    return toPromptInjectionView(await this.createInjection.execute(actor, id, branchId, { ...body }));
  }

  private async update(
    actor: Actor,
    id: string,
    branchId: string | null,
    injectionId: string,
    body: UpdatePromptInjectionDto,
  ) {
    return toPromptInjectionView(
      await this.updateInjection.execute(actor, id, branchId, injectionId, { ...body }),
    );
  }

  private async remove(actor: Actor, id: string, branchId: string | null, injectionId: string) {
    return toPromptInjectionView(await this.deleteInjection.execute(actor, id, branchId, injectionId));
  }
}
