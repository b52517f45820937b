import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { anEvent } from '../../../test/contracts/builders.ts'
import { createDuckDbEventStore } from './duckdb-event-store.ts'
import { createDuckDbSessionCompaction } from './duckdb-session-compaction.ts'
import { openDuckDb, type DuckDb } from './open-duckdb.ts'

// The compaction of the sessions aggregate on DuckDB (duckdb-session-compaction.ts), beside the event
// store's ingestion as the app runs them: each on its own connection.
async function open(t: TestContext) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-session-compaction-'))
  const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb)
  const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
  t.after(async () => {
    await store.close()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })
  return { db, store }
}

const at = (s: number) => new Date(Date.UTC(2024, 5, 3, 8, 0, s))
const ev = (session: string, second: number, url: string, over: { event?: string; distinctId?: string; extra?: Record<string, unknown> } = {}) =>
  anEvent({
    event: over.event ?? '$pageview',
    distinctId: over.distinctId ?? 'u',
    timestamp: at(second),
    createdAt: new Date(),
    properties: JSON.stringify({ $session_id: session, $current_url: url, ...over.extra }),
  })

/** Each session merged as queries merge its partials, and its number of partials. */
async function merged(db: DuckDb) {
  const r = await db.connection.runAndReadAll(`
    SELECT session_id, min(min_ms)::DOUBLE AS start, max(max_ms)::DOUBLE AS "end", arg_min(first_current_url, min_ms) AS entry,
      arg_min(first_utm_source, min_ms) AS utm, arg_max(last_current_url, max_ms) AS exit, arg_max(last_distinct_id, max_ms) AS who,
      sum(pageviews)::INTEGER AS pageviews, sum(autocaptures)::INTEGER AS autocaptures, count(*)::INTEGER AS partials
    FROM sessions GROUP BY session_id ORDER BY session_id`)
  return r.getRowObjectsJS().map((row) => ({ ...row }))
}

const second = (s: number) => at(s).getTime()

test('compaction: one row per session, the same merged session; a partial stored during the step stays and is merged next time', async (t) => {
  const { db, store } = await open(t)
  // s-1 over three batches, its first page view stored last; s-2 in one batch.
  await store.insertBatch([ev('s-1', 20, 'https://x.example.com/b', { event: '$autocapture' }), ev('s-2', 5, 'https://x.example.com/only')])
  await store.insertBatch([ev('s-1', 40, 'https://x.example.com/c', { distinctId: 'user-1' })])
  await store.insertBatch([ev('s-1', 0, 'https://x.example.com/a', { extra: { utm_source: 'news' } })])
  const s1 = { session_id: 's-1', start: second(0), end: second(40), entry: 'https://x.example.com/a', utm: 'news', exit: 'https://x.example.com/c', who: 'user-1', pageviews: 2, autocaptures: 1 }
  const s2 = { session_id: 's-2', start: second(5), end: second(5), entry: 'https://x.example.com/only', utm: '', exit: 'https://x.example.com/only', who: 'u', pageviews: 1, autocaptures: 0 }
  assert.deepEqual(await merged(db), [{ ...s1, partials: 3 }, { ...s2, partials: 1 }])

  // During the step's transaction, after it read s-1's partials and before it deletes them, ingestion stores a later page view of s-1 (and a new session).
  let during: Promise<unknown> = Promise.resolve()
  const compaction = createDuckDbSessionCompaction(await db.connect(), {
    beforeDelete: async () => {
      during = store.insertBatch([ev('s-1', 70, 'https://x.example.com/d'), ev('s-3', 1, 'https://x.example.com/new')])
      await during
    },
  })
  const step = await compaction.compactStep(100)
  await during
  assert.deepEqual({ ...step, partials: undefined }, { sessions: 1, removedPartials: 2, partials: undefined, more: false })
  const s1Later = { ...s1, end: second(70), exit: 'https://x.example.com/d', who: 'u', pageviews: 3 }
  const s3 = { session_id: 's-3', start: second(1), end: second(1), entry: 'https://x.example.com/new', utm: '', exit: 'https://x.example.com/new', who: 'u', pageviews: 1, autocaptures: 0 }
  // s-1: its merged row and the partial stored meanwhile, which the step did not see and kept.
  assert.deepEqual(await merged(db), [{ ...s1Later, partials: 2 }, { ...s2, partials: 1 }, { ...s3, partials: 1 }])

  // The next step merges the merged row with the later partial: the same session (the merge is associative).
  const again = createDuckDbSessionCompaction(await db.connect())
  assert.deepEqual(await again.compactStep(100), { sessions: 1, removedPartials: 1, partials: 3, more: false })
  assert.deepEqual(await merged(db), [{ ...s1Later, partials: 1 }, { ...s2, partials: 1 }, { ...s3, partials: 1 }])
  assert.deepEqual(await again.compactStep(100), { sessions: 0, removedPartials: 0, partials: 3, more: false })
})

test('compaction: a step merges at most its limit of sessions and says when more are left', async (t) => {
  const { db, store } = await open(t)
  for (let batch = 0; batch < 2; batch++) {
    await store.insertBatch(['a', 'b', 'c'].map((s) => ev(`s-${s}`, batch * 10, `https://x.example.com/${s}${batch}`)))
  }
  const compaction = createDuckDbSessionCompaction(await db.connect())
  const first = await compaction.compactStep(2)
  assert.deepEqual(first, { sessions: 2, removedPartials: 2, partials: 4, more: true })
  assert.deepEqual(await compaction.compactStep(2), { sessions: 1, removedPartials: 1, partials: 3, more: false })
  assert.deepEqual(
    (await merged(db)).map((r) => [r.session_id, r.entry, r.exit, r.pageviews, r.partials]),
    ['a', 'b', 'c'].map((s) => [`s-${s}`, `https://x.example.com/${s}0`, `https://x.example.com/${s}1`, 2, 1]),
  )
})
