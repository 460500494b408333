'use strict';
// The smallest possible proxy for the chat benchmark (P9), run as its own process: every request is
// sent on to RELAY_TARGET (the fake model's origin) over a keep-alive connection and the answer's bytes
// are piped back as they arrive, unparsed. P9 measures it like Hearth, as information: what one more
// process on a chunk's way costs on this machine (its scheduling and socket hops), with none of
// Hearth's work. Sends {type: 'ready', port} over IPC once it listens.
const http = require('node:http');

const target = new URL(process.env.RELAY_TARGET);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

const server = http.createServer((req, res) => {
  const upstream = http.request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: target.host },
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (bytes) => res.write(bytes));
      answer.on('end', () => res.end());
    },
  );
  upstream.setNoDelay(true);
  upstream.on('error', () => res.destroy());
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});
server.on('connection', (socket) => socket.setNoDelay(true));

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  if (process.send) process.send({ type: 'ready', port });
});
process.on('disconnect', () => process.exit(0));
