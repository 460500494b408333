'use strict';
// A small OpenAI Chat Completions server for the chat benchmark (P9), run as its own process: every
// request streams CHUNKS chunks, the first at once after the headers, then one every CHUNK_DELAY_MS
// (`data:` lines, usage, `[DONE]`); non-streaming requests get the whole text. The newest message that
// contains `[chunks=N]` gets N chunks instead (P9's concurrent phase: the reference's 50 chunks).
// Sends {type: 'ready', port} over IPC once it listens.
const http = require('node:http');

const DEFAULT_CHUNKS = Number(process.env.FAKE_CHUNKS ?? 8);
const CHUNK_DELAY_MS = Number(process.env.FAKE_CHUNK_DELAY_MS ?? 20);

function frame(id, delta, finish) {
  return `data: ${JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created: 1,
    model: 'fake-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
}

const server = http.createServer((req, res) => {
  const body = [];
  req.on('data', (c) => body.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"not found"}}');
      return;
    }
    const request = JSON.parse(Buffer.concat(body).toString('utf8') || '{}');
    const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
    const texts = (Array.isArray(request.messages) ? request.messages : []).map((m) =>
      typeof m?.content === 'string' ? m.content : '',
    );
    const asked = /\[chunks=(\d+)\]/.exec(texts.reverse().find((t) => t.includes('[chunks=')) ?? '');
    const CHUNKS = asked ? Number(asked[1]) : DEFAULT_CHUNKS;
    if (!request.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 1,
          model: 'fake-model',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'chunk '.repeat(CHUNKS) },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: CHUNKS, total_tokens: 10 + CHUNKS },
        }),
      );
      return;
    }
    res.socket.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    let timer = null;
    const next = () => {
      if (res.destroyed) return;
      res.write(
        frame(id, sent === 0 ? { role: 'assistant', content: `c${sent} ` } : { content: `c${sent} ` }, null),
      );
      sent += 1;
      if (sent < CHUNKS) timer = setTimeout(next, CHUNK_DELAY_MS);
      else {
        res.write(frame(id, {}, 'stop'));
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [], usage: { prompt_tokens: 10, completion_tokens: CHUNKS, total_tokens: 10 + CHUNKS } })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
      }
    };
    res.on('close', () => timer && clearTimeout(timer));
    next();
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  if (process.send) process.send({ type: 'ready', port });
});
process.on('disconnect', () => process.exit(0));
