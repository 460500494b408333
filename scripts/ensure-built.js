// Builds both apps when dist/ is missing or older than the sources, so `npm start` and
// `npm run db:migrate` work from a clean clone with no separate build step. Test suites running in
// parallel call it too: one build at a time (a lock directory), and a caller that waited re-checks,
// since `nest build` empties dist/ first and a second build under a running one removed its output.
const { existsSync, statSync, readdirSync, mkdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
const outputs = [
  join(root, 'dist/apps/api/apps/api/src/main.js'),
  join(root, 'dist/apps/worker/apps/worker/src/main.js'),
];

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const lock = join(root, '.build-lock');
/** A lock older than this is left over from a killed build. */
const STALE_LOCK_MS = 5 * 60_000;

function needsBuild() {
  const built = outputs.every((file) => existsSync(file));
  if (!built) return true;
  return (
    Math.max(...['apps', 'libs', 'db'].map((d) => newestSource(join(root, d)))) >
    Math.min(...outputs.map((file) => statSync(file).mtimeMs))
  );
}

function tryLock() {
  try {
    mkdirSync(lock);
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    return false;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
// At most one build of our own: a source newer than any build (edited meanwhile, or dated in the future)
// must not loop.
let builtHere = false;
while (!builtHere && needsBuild()) {
  if (!tryLock()) {
    Atomics.wait(pause, 0, 0, 200);
    continue;
  }
  try {
    if (needsBuild()) execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
    builtHere = true;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
