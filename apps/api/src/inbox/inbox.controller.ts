import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateInboxEntryUseCase,
  DecideInboxEntryUseCase,
  GetInboxEntryUseCase,
  ListInboxEntriesUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import {
  CreateInboxEntryDto,
  DecideInboxEntryDto,
  ListInboxEntriesQueryDto,
  toInboxEntryView,
} from './inbox.dto';

/** The Project inbox (spec 1 names it; docs/decisions.md "Inbox"), without a data wrapper. */
@ApiTags('inbox')
@Envelope('bare')
@Controller('projects/:id/inbox')
export class InboxController {
  constructor(
    private readonly listEntries: ListInboxEntriesUseCase,
    private readonly createEntry: CreateInboxEntryUseCase,
    private readonly getEntry: GetInboxEntryUseCase,
    private readonly decideEntry: DecideInboxEntryUseCase,
  ) {}

  @Get()
  async list(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Query() query: ListInboxEntriesQueryDto,
  ) {
    const page = await this.listEntries.execute(actor, projectId, query);
    return { items: page.items.map(toInboxEntryView), next_cursor: page.next_cursor };
  }

  @Post()
  async create(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Body() body: CreateInboxEntryDto,
  ) {
    return { item: toInboxEntryView(await this.createEntry.execute(actor, projectId, body)) };
  }

  @Get(':entry_id')
  async detail(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('entry_id') entryId: string,
  ) {
    return { item: toInboxEntryView(await this.getEntry.execute(actor, projectId, entryId)) };
  }

  /** Owner only. Records the decision; nothing is merged into a session. */
  @Post(':entry_id/accept')
  @HttpCode(200)
  async accept(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('entry_id') entryId: string,
    @Body() body: DecideInboxEntryDto,
  ) {
    return {
      item: toInboxEntryView(await this.decideEntry.execute(actor, projectId, entryId, 'accepted', body)),
    };
  }

  /** Owner only. */
  @Post(':entry_id/reject')
  @HttpCode(200)
  async reject(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('entry_id') entryId: string,
    @Body() body: DecideInboxEntryDto,
  ) {
    return {
      item: toInboxEntryView(await this.decideEntry.execute(actor, projectId, entryId, 'rejected', body)),
    };
  }
}
