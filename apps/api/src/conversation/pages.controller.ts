import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivatePageUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { toFloorDetailView } from './conversation.dto';

/** `POST /pages/:id/activate`: the swipe (docs/decisions.md "Conversations"). */
@ApiTags('conversation')
@Envelope('data')
@Controller('pages')
export class PagesController {
  constructor(private readonly activatePage: ActivatePageUseCase) {}

  @Post(':id/activate')
  @HttpCode(200)
  async activate(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return toFloorDetailView(await this.activatePage.execute(actor, id));
  }
}
