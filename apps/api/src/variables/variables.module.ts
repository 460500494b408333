import { Module } from '@nestjs/common';
import {
  BatchUpsertVariablesUseCase,
  DeleteVariableUseCase,
  GetVariableUseCase,
  ListPagePromotionsUseCase,
  ListPageStagedWritesUseCase,
  ListVariablesUseCase,
  ResolveVariablesUseCase,
  UpsertVariableUseCase,
} from '@hearth/app';
import { PageVariablesController, VariablesController } from './variables.controller';

@Module({
  controllers: [VariablesController, PageVariablesController],
  providers: [
    UpsertVariableUseCase,
    BatchUpsertVariablesUseCase,
    ListVariablesUseCase,
    GetVariableUseCase,
    DeleteVariableUseCase,
    ResolveVariablesUseCase,
    ListPageStagedWritesUseCase,
    ListPagePromotionsUseCase,
  ],
})
export class VariablesModule {}
