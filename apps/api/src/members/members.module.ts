import { Module } from '@nestjs/common';
import { AddProjectMemberUseCase, ListProjectMembersUseCase, RemoveProjectMemberUseCase } from '@hearth/app';
import { MembersController } from './members.controller';

@Module({
  controllers: [MembersController],
  providers: [ListProjectMembersUseCase, AddProjectMemberUseCase, RemoveProjectMemberUseCase],
})
export class MembersModule {}
