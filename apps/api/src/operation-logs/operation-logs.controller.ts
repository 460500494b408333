import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ListFloorOperationLogsUseCase,
  ListOperationLogsUseCase,
  ListSessionOperationLogsUseCase,
  type OperationLogList,
} from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { IdParamDto } from '../accounts/accounts.dto';
import { CurrentActor } from '../http/actor.decorator';
import { DataList, Envelope } from '../http/envelope';
import {
  FloorOperationLogQueryDto,
  OperationLogQueryDto,
  operationLogMeta,
  SessionOperationLogQueryDto,
  toListInput,
  toOperationLogView,
} from './operation-logs.dto';

const render = (list: OperationLogList) =>
  new DataList(list.items.map(toOperationLogView), operationLogMeta(list));

/** Spec 3 "Operation logs (read-only)": only the caller's account's rows. */
@ApiTags('operation-logs')
@Envelope('data')
@Controller()
export class OperationLogsController {
  constructor(
    private readonly listAll: ListOperationLogsUseCase,
    private readonly listOfSession: ListSessionOperationLogsUseCase,
    private readonly listOfFloor: ListFloorOperationLogsUseCase,
  ) {}

  @Get('operation-logs')
  async list(@CurrentActor() actor: Actor, @Query() query: OperationLogQueryDto) {
    return render(await this.listAll.execute(actor, toListInput(query)));
  }

  @Get('sessions/:id/operation-logs')
  async listSession(
    @CurrentActor() actor: Actor,
    @Param() { id }: IdParamDto,
    @Query() query: SessionOperationLogQueryDto,
  ) {
    return render(await this.listOfSession.execute(actor, id, toListInput(query)));
  }

  @Get('floors/:id/operation-logs')
  async listFloor(
    @CurrentActor() actor: Actor,
    @Param() { id }: IdParamDto,
    @Query() query: FloorOperationLogQueryDto,
  ) {
    return render(await this.listOfFloor.execute(actor, id, toListInput(query)));
  }
}
