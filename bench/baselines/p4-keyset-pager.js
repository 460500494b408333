'use strict';
// P4 anchor: raw keyset paging over the same table with a bare pg client,
// `SELECT * FROM project_events WHERE project_id=$1 AND sequence>$2 ORDER BY sequence LIMIT 500` in a loop.
// argv[2]: JSON {databaseUrl, projectId, after, target}
const pg = require('pg');
const { nowMs, runChild } = require('../lib/harness');

pg.types.setTypeParser(20, (value) => Number(value));
const PAGE = `SELECT * FROM project_events WHERE project_id = $1 AND sequence > $2 ORDER BY sequence LIMIT 500`;

runChild(async () => {
  const { databaseUrl, projectId, after, target } = JSON.parse(process.argv[2]);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-p4-pager' });
  await client.connect();
  try {
    const t0 = nowMs();
    let cursor = after;
    let rows = 0;
    for (let page = 0; page < 1000 && cursor < target; page++) {
      const result = await client.query(PAGE, [projectId, cursor]);
      if (result.rows.length === 0) break;
      rows += result.rows.length;
      cursor = result.rows[result.rows.length - 1].sequence;
    }
    return { type: 'result', rows: Math.min(rows, target - after), ms: nowMs() - t0, cursor };
  } finally {
    await client.end();
  }
});
