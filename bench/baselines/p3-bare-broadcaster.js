'use strict';
// P3 anchor: a bare node:http SSE broadcaster. It holds every response open and, `events` times at
// `intervalMs`, writes one preformatted frame (the same bytes as a Hearth frame, with its own id) to
// all of them, reporting each frame's send time ("commit") to the parent.
const http = require('node:http');
const { nowMs } = require('../lib/harness');

const responses = new Set();
const server = http.createServer((req, res) => {
  req.socket.setNoDelay(true);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
  res.write('retry: 2000\n\n');
  responses.add(res);
  res.on('close', () => responses.delete(res));
});
server.keepAliveTimeout = 0;
server.requestTimeout = 0;

function broadcast({ events, intervalMs, frameTemplate }) {
  // The template is a Hearth frame; only its `id:` line changes.
  const rest = frameTemplate.slice(frameTemplate.indexOf('\n') + 1);
  const start = nowMs() + 50;
  let seq = 0;
  const tick = () => {
    seq++;
    const frame = `id: ${seq}\n${rest}`;
    const t = nowMs();
    for (const res of responses) res.write(frame);
    process.send({ type: 'commit', seq, t });
    if (seq >= events) {
      process.send({ type: 'done', clients: responses.size });
      return;
    }
    setTimeout(tick, Math.max(0, start + seq * intervalMs - nowMs()));
  };
  setTimeout(tick, Math.max(0, start - nowMs()));
}

process.on('message', (message) => {
  if (message.type === 'start') broadcast(message);
});
server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
process.on('SIGTERM', () => {
  for (const res of responses) res.destroy();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
});
