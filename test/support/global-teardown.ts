import { rmSync } from 'node:fs';
import { withAdminClient } from './postgres-admin';

export default async function globalTeardown(): Promise<void> {
  const pgliteTemplate = process.env.HEARTH_TEST_PGLITE_TEMPLATE;
  if (pgliteTemplate) rmSync(pgliteTemplate, { recursive: true, force: true });
  const template = process.env.HEARTH_TEST_TEMPLATE_DB;
  if (!template) return;
  await withAdminClient(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  });
}
