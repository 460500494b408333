import { Module } from '@nestjs/common';
import {
  CreateNodeGraphUseCase,
  DeleteNodeGraphUseCase,
  GetNodeGraphUseCase,
  ListNodeGraphsUseCase,
  NodeGraphAccess,
  NodeGraphJournal,
  UpdateNodeGraphUseCase,
} from '@hearth/app';
import { NodeGraphsController } from './node-graphs.controller';

@Module({
  controllers: [NodeGraphsController],
  providers: [
    NodeGraphAccess,
    NodeGraphJournal,
    ListNodeGraphsUseCase,
    CreateNodeGraphUseCase,
    GetNodeGraphUseCase,
    UpdateNodeGraphUseCase,
    DeleteNodeGraphUseCase,
  ],
})
export class NodeGraphsModule {}
