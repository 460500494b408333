import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CreateBranchUseCase, GetFloorUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { CreateBranchDto, toCreatedBranchView, toFloorDetailView } from './conversation.dto';

/** `GET /floors/:id` and `POST /floors/:id/branch` (CONTRACT.md "Sessions"). */
@ApiTags('conversation')
@Envelope('data')
@Controller('floors')
export class FloorsController {
  constructor(
    private readonly getFloor: GetFloorUseCase,
    private readonly createBranch: CreateBranchUseCase,
  ) {}

  @Get(':id')
  async detail(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return toFloorDetailView(await this.getFloor.execute(actor, id));
  }

  @Post(':id/branch')
  async branch(@CurrentActor() actor: Actor, @Param('id') id: string, @Body() body: CreateBranchDto) {
    return toCreatedBranchView((await this.createBranch.execute(actor, id, body)).branch);
  }
}
