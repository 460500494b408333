import { Module } from '@nestjs/common';
import {
  ListFloorOperationLogsUseCase,
  ListOperationLogsUseCase,
  ListSessionOperationLogsUseCase,
} from '@hearth/app';
import { OperationLogsController } from './operation-logs.controller';

@Module({
  controllers: [OperationLogsController],
  providers: [ListOperationLogsUseCase, ListSessionOperationLogsUseCase, ListFloorOperationLogsUseCase],
})
export class OperationLogsModule {}
