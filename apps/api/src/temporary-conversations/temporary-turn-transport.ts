import type { Request, Response } from 'express';
import { temporaryTurnResult, type PreparedTurn, type RunEvent, type TemporaryTurnInput } from '@hearth/app';
import { SseWriter } from '../http/sse-writer';

/**
 * Runs a temporary conversation's prepared turn over the response, like the chat routes' runTurn
 * (SSE with Accept `text/event-stream`, else JSON), with spec 2's temporary shapes: `start` and `done`
 * carry `conversation_id` and name the branch `main`; `done` and the JSON `data` are the temporary
 * result. No detach: a client that goes away cancels the turn.
 */
export async function runTemporaryTurn(
  conversationId: string,
  kind: TemporaryTurnInput['kind'],
  prepared: PreparedTurn,
  req: Request,
  res: Response,
  options: { sse: boolean; heartbeatMs: number },
): Promise<void> {
  if (options.sse) {
    const writer = new SseWriter(req, res, { heartbeatMs: options.heartbeatMs, coalesce: true });
    prepared.attach((event) => writer.send([reshape(conversationId, kind, event)]));
    writer.onClose(() => {
      prepared.attach(null);
      prepared.cancel('client_disconnected');
    });
    await prepared.execute();
    writer.end();
    return;
  }
  res.on('close', () => {
    if (!res.writableFinished) prepared.cancel('client_disconnected');
  });
  const outcome = await prepared.execute();
  if (!outcome.ok) throw outcome.error;
  res.status(200).json({ data: temporaryTurnResult(conversationId, kind, outcome.result) });
}

function reshape(conversationId: string, kind: TemporaryTurnInput['kind'], event: RunEvent): RunEvent {
  if (event.type === 'done')
    return {
      ...event,
      data: JSON.stringify(temporaryTurnResult(conversationId, kind, JSON.parse(event.data))),
    };
  if (event.type === 'start')
    return {
      ...event,
      data: JSON.stringify({ ...JSON.parse(event.data), conversation_id: conversationId, branch_id: 'main' }),
    };
  return event;
}
