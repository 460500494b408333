import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { GetSessionStateUseCase, ListFloorSessionStateWritesUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { ClientDataEnabledGuard } from './client-data-enabled.guard';
import { SessionStateQueryDto, toFloorSessionStateWriteView, toSessionStateView } from './client-data.dto';

/** Session state reads (docs/decisions.md "Client data and session state"), in `{data}`. */
@ApiTags('client data')
@Envelope('data')
@UseGuards(ClientDataEnabledGuard)
@Controller()
export class SessionStateController {
  constructor(
    private readonly getState: GetSessionStateUseCase,
    private readonly listFloorWrites: ListFloorSessionStateWritesUseCase,
  ) {}

  @Get('sessions/:id/state')
  @ApiOperation({ summary: 'The session state a floor sees (default: the head of main)' })
  async state(@CurrentActor() actor: Actor, @Param('id') id: string, @Query() query: SessionStateQueryDto) {
    return toSessionStateView(await this.getState.execute(actor, id, query));
  }

  @Get('floors/:id/session-state-writes')
  @ApiOperation({ summary: 'The session state writes a floor’s turn landed, in request order' })
  async floorWrites(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return (await this.listFloorWrites.execute(actor, id)).map(toFloorSessionStateWriteView);
  }
}
