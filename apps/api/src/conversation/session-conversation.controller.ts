import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ListBranchesUseCase, ListFloorsUseCase, ResetBranchUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import { ListFloorsQueryDto, ResetBranchDto, toBranchView, toFloorView } from './conversation.dto';

/** A session's transcript and branches (CONTRACT.md "Sessions"; docs/decisions.md "Conversations"). */
@ApiTags('conversation')
@Envelope('data')
@Controller('sessions')
export class SessionConversationController {
  constructor(
    private readonly listFloors: ListFloorsUseCase,
    private readonly listBranches: ListBranchesUseCase,
    private readonly resetBranch: ResetBranchUseCase,
  ) {}

  @Get(':id/floors')
  async floors(@CurrentActor() actor: Actor, @Param('id') id: string, @Query() query: ListFloorsQueryDto) {
    const page = await this.listFloors.execute(actor, id, query);
    return new DataList(page.floors.map(toFloorView), page.meta);
  }

  @Get(':id/branches')
  async branches(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return (await this.listBranches.execute(actor, id)).map(toBranchView);
  }

  @Post(':id/branches/:branchId/reset')
  @HttpCode(200)
  async reset(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('branchId') branchId: string,
    @Body() body: ResetBranchDto,
  ) {
    return toBranchView(await this.resetBranch.execute(actor, id, branchId, body.floor_id));
  }
}
