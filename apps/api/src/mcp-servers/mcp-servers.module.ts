import { Module } from '@nestjs/common';
import {
  CreateMcpServerUseCase,
  DeleteMcpServerUseCase,
  GetMcpServerUseCase,
  ListMcpServersUseCase,
  UpdateMcpServerUseCase,
} from '@hearth/app';
import { McpServersController } from './mcp-servers.controller';

@Module({
  controllers: [McpServersController],
  providers: [
    CreateMcpServerUseCase,
    ListMcpServersUseCase,
    GetMcpServerUseCase,
    UpdateMcpServerUseCase,
    DeleteMcpServerUseCase,
  ],
})
export class McpServersModule {}
