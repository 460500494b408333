import { Module } from '@nestjs/common';
import {
  ListProjectEventsUseCase,
  OpenProjectEventStreamUseCase,
  ProjectEventAccessCheck,
  ProjectEventHub,
} from '@hearth/app';
import { EventsController } from './events.controller';

/** The Project event log routes and this process's stream hub. */
@Module({
  controllers: [EventsController],
  providers: [
    ProjectEventHub,
    ProjectEventAccessCheck,
    ListProjectEventsUseCase,
    OpenProjectEventStreamUseCase,
  ],
})
export class EventsModule {}
