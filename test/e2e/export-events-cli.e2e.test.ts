import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { run } from '../../src/cli/run.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { readAllEvents } from '../helpers/capture-helpers.ts'
import { captureVariedEvents, expected, readBackExport } from '../helpers/export-readback.ts'

testOnEachEngine('tally export-events writes the events from <= timestamp < to of a project to a file DuckDB reads back', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  // One event exactly on each bound: --from takes it, --to does not.
  await captureVariedEvents(app, [
    { event: 'on from', distinct_id: 'edge', timestamp: '2024-05-02T00:00:00.000Z', properties: {} },
    { event: 'on to', distinct_id: 'edge', timestamp: '2024-05-05T00:00:00.000Z', properties: {} },
  ])
  const all = expected(await readAllEvents(app))
  const from = BigInt(Date.UTC(2024, 4, 2)) * 1000n
  const to = BigInt(Date.UTC(2024, 4, 5)) * 1000n
  const want = all.filter((e) => e.ts >= from && e.ts < to)
  assert.ok(want.some((e) => e.event === 'on from') && !want.some((e) => e.event === 'on to'))
  assert.ok(want.length < all.length - 1)
  await app.close() // the embedded data dir takes one process at a time
  const env = { TALLY_DATA_DIR: app.dataDir, TALLY_LOG_LEVEL: 'silent', ...(app.config.storage.clickhouseUrl ? { TALLY_CLICKHOUSE_URL: app.config.storage.clickhouseUrl } : {}) }
  for (const format of ['parquet', 'csv', 'ndjson'] as const) {
    const out = path.join(app.dataDir, `out.${format}`)
    const code = await run(['export-events', '--project', String(app.projectId), '--from', '2024-05-02', '--to', '2024-05-05', '--format', format, '--out', out], env)
    assert.equal(code, 0)
    assert.deepEqual(await readBackExport(t, await readFile(out), format), want, format)
  }
  assert.equal(await run(['export-events', '--project', String(app.projectId), '--format', 'xml', '--out', path.join(app.dataDir, 'x')], env), 2)
  assert.equal(await run(['export-events', '--project', String(app.projectId), '--from', 'soon', '--format', 'csv', '--out', path.join(app.dataDir, 'x')], env), 2)
})
