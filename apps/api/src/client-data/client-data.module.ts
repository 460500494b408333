import { Module } from '@nestjs/common';
import {
  CreateClientDataNamespaceUseCase,
  DeleteClientDataNamespaceUseCase,
  GetClientDataNamespaceUseCase,
  GetClientDataUsageUseCase,
  GetSessionStateUseCase,
  ListClientDataNamespacesUseCase,
  ListFloorSessionStateWritesUseCase,
  UpdateClientDataNamespaceUseCase,
} from '@hearth/app';
import { ClientDataEnabledGuard } from './client-data-enabled.guard';
import { ClientDataController } from './client-data.controller';
import { SessionStateController } from './session-state.controller';

@Module({
  controllers: [ClientDataController, SessionStateController],
  providers: [
    ClientDataEnabledGuard,
    CreateClientDataNamespaceUseCase,
    ListClientDataNamespacesUseCase,
    GetClientDataNamespaceUseCase,
    UpdateClientDataNamespaceUseCase,
    DeleteClientDataNamespaceUseCase,
    GetClientDataUsageUseCase,
    GetSessionStateUseCase,
    ListFloorSessionStateWritesUseCase,
  ],
})
export class ClientDataModule {}
