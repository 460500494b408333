import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  GetLlmProfileOverrideUseCase,
  ListMcpBindingsUseCase,
  ListToolPolicyOverridesUseCase,
  llmOverrideView,
  mcpBindingView,
  PutLlmProfileOverrideUseCase,
  PutMcpBindingUseCase,
  PutToolPolicyOverrideUseCase,
  toolPolicyOverrideView,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { PutLlmProfileOverrideDto, PutMcpBindingDto, PutToolPolicyOverrideDto } from './settings.dto';

/**
 * Spec 1 "Project settings overrides", without a data wrapper: GETs answer `{item}` / `{items}`, PUTs
 * (upserts, 200) answer the written object itself.
 */
@ApiTags('project settings')
@Envelope('bare')
@Controller('projects/:id/settings')
export class SettingsController {
  constructor(
    private readonly getLlmOverride: GetLlmProfileOverrideUseCase,
    private readonly putLlmOverride: PutLlmProfileOverrideUseCase,
    private readonly listBindings: ListMcpBindingsUseCase,
    private readonly putBinding: PutMcpBindingUseCase,
    private readonly listPolicyOverrides: ListToolPolicyOverridesUseCase,
    private readonly putPolicyOverride: PutToolPolicyOverrideUseCase,
  ) {}

  @Get('llm-profile-override')
  async llmOverride(@CurrentActor() actor: Actor, @Param('id') projectId: string) {
    const row = await this.getLlmOverride.execute(actor, projectId);
    return { item: row ? llmOverrideView(row) : null };
  }

  @Put('llm-profile-override')
  async writeLlmOverride(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: PutLlmProfileOverrideDto,
  ) {
    return llmOverrideView(await this.putLlmOverride.execute(actor, projectId, body));
  }

  @Get('mcp-bindings')
  async mcpBindings(@CurrentActor() actor: Actor, @Param('id') projectId: string) {
    return { items: (await this.listBindings.execute(actor, projectId)).map(mcpBindingView) };
  }

  @Put('mcp-bindings')
  async writeMcpBinding(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: PutMcpBindingDto,
  ) {
    return mcpBindingView(await this.putBinding.execute(actor, projectId, body));
  }

  @Get('tool-policy-overrides')
  async toolPolicyOverrides(@CurrentActor() actor: Actor, @Param('id') projectId: string) {
    return { items: (await this.listPolicyOverrides.execute(actor, projectId)).map(toolPolicyOverrideView) };
  }

  @Put('tool-policy-overrides')
  async writeToolPolicyOverride(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: PutToolPolicyOverrideDto,
  ) {
    return toolPolicyOverrideView(await this.putPolicyOverride.execute(actor, projectId, body));
  }
}
