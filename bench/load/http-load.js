'use strict';
// Load generator process: one autocannon run, result sent back over IPC.
// argv[2]: JSON {url, headers, connections, seconds, method?, body?, paths?}; with `paths`, every
// request goes to one of them at random (e.g. writes spread over many Projects).
const autocannon = require('autocannon');
const { runChild } = require('../lib/harness');

async function main() {
  const {
    url,
    headers = {},
    connections,
    seconds,
    method = 'GET',
    body,
    paths,
  } = JSON.parse(process.argv[2]);
  const request = { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
  if (paths)
    request.setupRequest = (req) => ({ ...req, path: paths[Math.floor(Math.random() * paths.length)] });
  const result = await autocannon({
    url,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    connections,
    duration: seconds,
    timeout: 10,
    requests: [request],
  });
  return {
    type: 'result',
    requestsPerSecond: result.requests.average,
    requestsTotal: result.requests.total,
    latency: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds: result.duration,
  };
}

runChild(main);
