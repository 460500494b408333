import type { Request, Response } from 'express';
import type { PreparedTurn } from '@hearth/app';
import { SseWriter } from '../http/sse-writer';

/**
 * Runs a prepared turn over the response (docs/decisions.md "Turns and runs"):
 * - SSE: `start`, `run`, `chunk`/`reasoning` as they arrive (nothing buffered: the events of one tick
 *   leave in one write, see SseWriter `coalesce`), then
 *   `done` or `error` (after the headers, errors are events). Every event carries its run sequence as
 *   `id:`. A client disconnect cancels the run unless it is detached.
 * - JSON: 200 `{data: result}`, or the turn's error (499 `generation_cancelled`, 504, 502, 409 …). A
 *   detached JSON turn answers 202 `{data: run snapshot}` at once and goes on in the background.
 */
export async function runTurn(
  prepared: PreparedTurn,
  req: Request,
  res: Response,
  options: { sse: boolean; heartbeatMs: number },
): Promise<void> {
  if (options.sse) {
    const writer = new SseWriter(req, res, { heartbeatMs: options.heartbeatMs, coalesce: true });
    prepared.attach((event) => writer.send([event]));
    // The response closes after every turn; only a close before the turn ended is a disconnect (aborting
    // an ended run's controller would only wake the finished upstream call's abort listeners).
    let ended = false;
    writer.onClose(() => {
      prepared.attach(null);
      if (!ended && !prepared.detached) prepared.cancel('client_disconnected');
    });
    await prepared.execute();
    ended = true;
    writer.end();
    return;
  }
  if (prepared.detached) {
    void prepared.execute();
    res.status(202).json({ data: prepared.snapshot() });
    return;
  }
  res.on('close', () => {
    if (!res.writableFinished) prepared.cancel('client_disconnected');
  });
  const outcome = await prepared.execute();
  if (!outcome.ok) throw outcome.error;
  res.status(200).json({ data: outcome.result });
}
