import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ActivatePageUseCase, ListPageCandidatesUseCase } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import { CurrentActor } from '../http/actor.decorator';
import { Envelope } from '../http/envelope';
import { toFloorDetailView, toPageCandidateView } from './conversation.dto';

/**
 * `POST /pages/:id/activate`: the swipe (docs/decisions.md "Conversations"); `GET
 * /pages/:id/staged-writes`: the page's candidates (docs/decisions.md "Page candidates").
 */
@ApiTags('conversation')
@Envelope('data')
@Controller('pages')
export class PagesController {
  constructor(
    private readonly activatePage: ActivatePageUseCase,
    private readonly candidates: ListPageCandidatesUseCase,
  ) {}

  @Post(':id/activate')
  @HttpCode(200)
  async activate(@CurrentActor() actor: Actor, @Param('id') id: string) {
    return toFloorDetailView(await this.activatePage.execute(actor, id));
  }

  @Get(':id/staged-writes')
  async stagedWrites(@CurrentActor() actor: Actor, @Param('id') id: string) {
    const listed = await this.candidates.execute(actor, id);
    return { ...listed, items: listed.items.map(toPageCandidateView) };
  }
}
