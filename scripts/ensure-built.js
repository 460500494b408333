// Builds both apps when dist/ is missing or older than the sources, so `npm start` and
// `npm run db:migrate` work from a clean clone with no separate build step.
const { existsSync, statSync, readdirSync } = require('node:fs');
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
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const built = outputs.every((file) => existsSync(file));
const stale =
  built &&
  Math.max(...['apps', 'libs', 'db'].map((d) => newestSource(join(root, d)))) >
    Math.min(...outputs.map((file) => statSync(file).mtimeMs));
if (!built || stale) {
  execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
}
