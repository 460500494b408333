// `node scripts/rotate-secrets.js [--batch-size N]`: re-encrypts every stored model API key under
// APP_SECRETS_MASTER_KEY (README "Rotating the secrets master key"). Builds first when needed.
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

require('./ensure-built.js');
const main = join(__dirname, '..', 'dist/apps/api/apps/api/src/main.js');
const result = spawnSync(process.execPath, [main, '--rotate-secrets', ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
