import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AddProjectMemberUseCase, ListProjectMembersUseCase, RemoveProjectMemberUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { AddMemberDto, toMemberView } from './members.dto';

/** Spec 1 "Members" (no data wrapper). */
@ApiTags('members')
@Envelope('bare')
@Controller('projects/:id/members')
export class MembersController {
  constructor(
    private readonly listMembers: ListProjectMembersUseCase,
    private readonly addMember: AddProjectMemberUseCase,
    private readonly removeMember: RemoveProjectMemberUseCase,
  ) {}

  /** Any member; the owner first (synthesised from Project ownership), then active members. */
  @Get()
  async list(@CurrentActor() actor: Actor, @Param('id') projectId: string) {
    return { items: (await this.listMembers.execute(actor, projectId)).map(toMemberView) };
  }

  @Post()
  @HttpCode(200)
  async add(@CurrentActor() actor: Actor, @Param('id') projectId: string, @Body() body: AddMemberDto) {
    return { item: toMemberView(await this.addMember.execute(actor, projectId, body)) };
  }

  @Delete(':subject_type/:subject_id')
  async remove(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('subject_type') subjectType: string,
    @Param('subject_id') subjectId: string,
  ) {
    return { item: toMemberView(await this.removeMember.execute(actor, projectId, subjectType, subjectId)) };
  }

  /** Legacy form: equals subject_type `account`. */
  @Delete(':account_id')
  async removeAccount(
    @CurrentActor() actor: Actor,
    @Param('id') projectId: string,
    @Param('account_id') accountId: string,
  ) {
    return { item: toMemberView(await this.removeMember.execute(actor, projectId, 'account', accountId)) };
  }
}
