// Docker HEALTHCHECK of the Hearth image. The API tier must answer GET /health; the worker tier
// has no HTTP, so it is healthy while its process runs (the container exits when the worker does).
const { readFileSync } = require('node:fs');

let role = 'api';
try {
  role = readFileSync('/tmp/hearth-role', 'utf8').trim();
} catch {
  // Started without the entrypoint: assume the API.
}
if (role !== 'api') process.exit(0);

const port = process.env.PORT || '3000';
const controller = new AbortController();
setTimeout(() => controller.abort(), 4000).unref();
fetch(`http://127.0.0.1:${port}/health`, { signal: controller.signal })
  .then((res) => process.exit(res.ok ? 0 : 1))
  .catch(() => process.exit(1));
