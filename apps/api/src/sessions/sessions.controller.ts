import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CreateSessionUseCase,
  DeleteSessionUseCase,
  GetSessionScopeUseCase,
  GetSessionUseCase,
  ListSessionsUseCase,
  UpdateSessionUseCase,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  CreateSessionDto,
  ListSessionsQueryDto,
  toSessionScopeView,
  toSessionView,
  UpdateSessionDto,
} from './sessions.dto';

/**
 * CONTRACT.md "Sessions" (the parts that need no generation) and spec 1 `GET /sessions/:id/scope`.
 * Legacy resource routes: a session outside the caller's Projects answers 404 `not_found`.
 */
@ApiTags('sessions')
@Envelope('data')
@Controller('sessions')
export class SessionsController {
  constructor(
    private readonly createSession: CreateSessionUseCase,
    private readonly listSessions: ListSessionsUseCase,
    private readonly getSession: GetSessionUseCase,
    private readonly getScope: GetSessionScopeUseCase,
    private readonly updateSession: UpdateSessionUseCase,
    private readonly deleteSession: DeleteSessionUseCase,
  ) {}

  @Post()
  async create(@CurrentActor() actor: Actor, @Body() body: CreateSessionDto) {
    return toSessionView(await this.createSession.execute(actor, body));
  }

  @Get()
  async list(@CurrentActor() actor: Actor, @Query() query: ListSessionsQueryDto) {
    const page = await this.listSessions.execute(actor, query);
    return new DataList(page.items.map(toSessionView), page.meta);
  }

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return toSessionView(await this.getSession.execute(actor, id));
  }

  /** A spec 1 route ("the routes of this document do not use a `data` wrapper"): answered bare. */
  @Get(':id/scope')
  @Envelope('bare')
  async scope(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return toSessionScopeView(await this.getScope.execute(actor, id));
  }

  @Patch(':id')
  async update(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: UpdateSessionDto) {
    return toSessionView(await this.updateSession.execute(actor, id, body));
  }

  /** Hard delete; `{data: {id, deleted: true}}`. */
  @Delete(':id')
  async remove(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return this.deleteSession.execute(actor, id);
  }
}
