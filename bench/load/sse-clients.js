'use strict';
// P3 client process: `clients` SSE streams on one URL. Receive times are kept per (client, sequence);
// the parent sends each event's commit time over IPC ({type: 'commit', seq, t}), and at the end
// ({type: 'finish'}) the commit-to-client latencies are computed here.
// argv[2]: JSON {url, headers, clients, events, connectBatch}; several such processes share the clients.
const { openSse } = require('../lib/sse-reader');
const { nowMs, histogramOf } = require('../lib/harness');

const { url, headers = {}, clients, events, connectBatch = 50 } = JSON.parse(process.argv[2]);
const received = new Float64Array(clients * events); // 0 = not received
const commits = new Float64Array(events + 1);
const streams = [];
let frameSample = null;
let duplicates = 0;
let outOfOrder = 0;
let closedEarly = 0;
let deliveredCount = 0;
const lastSeq = new Int32Array(clients);

function connect(index) {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (ok) => {
      if (!settled) {
        settled = true;
        resolve(ok);
      }
    };
    const stream = openSse(url, {
      headers,
      keepRaw: index === 0,
      idsOnly: true,
      onOpen: (res) => settle(res.statusCode === 200),
      onError: () => settle(false),
      onClose: () => closedEarly++,
      onEvent: (event) => {
        if (event.id === null) return;
        const seq = Number(event.id);
        if (index === 0 && frameSample === null && event.raw) frameSample = event.raw;
        if (!(seq >= 1 && seq <= events)) return;
        const slot = index * events + seq - 1;
        if (received[slot] !== 0) duplicates++;
        else {
          received[slot] = nowMs();
          deliveredCount++;
        }
        if (seq <= lastSeq[index]) outOfOrder++;
        lastSeq[index] = seq;
      },
    });
    streams.push(stream);
  });
}

async function connectAll() {
  let failed = 0;
  for (let i = 0; i < clients; i += connectBatch) {
    const batch = [];
    for (let j = i; j < Math.min(clients, i + connectBatch); j++) batch.push(connect(j));
    failed += (await Promise.all(batch)).filter((ok) => !ok).length;
  }
  return failed;
}

async function finish() {
  const deadline = nowMs() + 10_000;
  while (deliveredCount < clients * events && nowMs() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const latencies = [];
  for (let c = 0; c < clients; c++) {
    for (let s = 0; s < events; s++) {
      const at = received[c * events + s];
      if (at !== 0 && commits[s + 1] !== 0) latencies.push(at - commits[s + 1]);
    }
  }
  for (const stream of streams) stream.close();
  return {
    type: 'result',
    histogram: histogramOf(latencies),
    expected: clients * events,
    delivered: deliveredCount,
    duplicates,
    outOfOrder,
    closedEarly,
    frameSample,
    frameBytes: frameSample ? Buffer.byteLength(frameSample) : null,
  };
}

process.on('message', (message) => {
  if (message.type === 'commit') commits[message.seq] = message.t;
  else if (message.type === 'finish') {
    finish().then(
      (result) => process.send(result, () => process.disconnect()),
      (error) => process.send({ type: 'error', error: String(error) }, () => process.disconnect()),
    );
  }
});

connectAll().then(
  (failed) => process.send({ type: 'connected', clients, failed }),
  (error) => process.send({ type: 'error', error: String(error) }),
);
