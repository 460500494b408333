import { Module } from '@nestjs/common';
import { GetProjectUseCase, ListProjectSessionsUseCase, ListProjectsUseCase } from '@hearth/app';
import { ArchiveProjectUseCase, RestoreProjectUseCase } from '@hearth/app';
import { ProjectLifecycleController } from './project-lifecycle.controller';
import { ProjectsController } from './projects.controller';

@Module({
  controllers: [ProjectsController, ProjectLifecycleController],
  providers: [
    ListProjectsUseCase,
    GetProjectUseCase,
    ListProjectSessionsUseCase,
    ArchiveProjectUseCase,
    RestoreProjectUseCase,
  ],
})
export class ProjectsModule {}
