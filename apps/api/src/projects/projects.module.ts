import { Module } from '@nestjs/common';
import { GetProjectUseCase, ListProjectSessionsUseCase, ListProjectsUseCase } from '@hearth/app';
import { ChangeProjectStatusUseCase } from '@hearth/app';
import { ProjectLifecycleController } from './project-lifecycle.controller';
import { ProjectsController } from './projects.controller';

@Module({
  controllers: [ProjectsController, ProjectLifecycleController],
  providers: [ListProjectsUseCase, GetProjectUseCase, ListProjectSessionsUseCase, ChangeProjectStatusUseCase],
})
export class ProjectsModule {}
