import { Module } from '@nestjs/common';
import { CreateClientUseCase, GetClientUseCase, ListClientsUseCase, UpdateClientUseCase } from '@hearth/app';
import { ClientsController } from './clients.controller';

@Module({
  controllers: [ClientsController],
  providers: [CreateClientUseCase, ListClientsUseCase, GetClientUseCase, UpdateClientUseCase],
})
export class ClientsModule {}
