'use strict';
// P4 client process: resumes the Project's stream with `Last-Event-ID` far behind, times the
// catch-up to `target`, then (after the parent writes one live event and sends its commit time)
// the handover to live; checks that the ids are exactly lastEventId+1 .. target+1, in order.
// argv[2]: JSON {url, headers, lastEventId, target, timeoutMs}
const { openSse } = require('../lib/sse-reader');
const { nowMs } = require('../lib/harness');

const { url, headers, lastEventId, target, timeoutMs } = JSON.parse(process.argv[2]);
const live = target + 1;
const ids = [];
let t0 = 0;
let caughtUpAt = 0;
let liveAt = 0;
let liveCommit = 0;
let stream = null;

const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms with ${ids.length} events`), timeoutMs);

function fail(error) {
  clearTimeout(timer);
  stream?.close();
  process.send({ type: 'error', error }, () => process.disconnect());
}

function maybeFinish() {
  if (!liveAt || !liveCommit) return;
  clearTimeout(timer);
  stream.close();
  let inOrder = ids.length === live - lastEventId;
  for (let i = 0; inOrder && i < ids.length; i++) inOrder = ids[i] === lastEventId + 1 + i;
  process.send(
    {
      type: 'result',
      rows: target - lastEventId,
      catchUpMs: caughtUpAt - t0,
      handoverMs: liveAt - liveCommit,
      received: ids.length,
      exact: inOrder,
    },
    () => process.disconnect(),
  );
}

process.on('message', (message) => {
  if (message.type === 'commit' && message.seq === live) {
    liveCommit = message.t;
    maybeFinish();
  }
});

t0 = nowMs();
stream = openSse(url, {
  headers: { ...headers, 'last-event-id': String(lastEventId) },
  idsOnly: true,
  onOpen: (res) => {
    if (res.statusCode !== 200) fail(`stream answered ${res.statusCode}`);
  },
  onError: (error) => fail(String(error)),
  onClose: () => fail(`stream closed after ${ids.length} events`),
  onEvent: (event) => {
    if (event.id === null) return;
    const seq = Number(event.id);
    ids.push(seq);
    if (seq === target) {
      caughtUpAt = nowMs();
      process.send({ type: 'caught-up' });
    } else if (seq === live) {
      liveAt = nowMs();
      maybeFinish();
    }
  },
});
