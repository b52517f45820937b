import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { access, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { openDuckDb } from './open-duckdb.ts'

/** Nice value of each thread of this process, from /proc (field 19 of its stat). */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>()
  for (const tid of readdirSync('/proc/self/task').map(Number)) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      out.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]))
    } catch {
      // ended meanwhile
    }
  }
  return out
}

test("DuckDB's own threads, those started for queries included, run at the query nice value; the event loop and libuv's pool keep theirs", { skip: process.platform !== 'linux' }, async (t) => {
  await access(os.tmpdir()) // libuv's pool is running before DuckDB opens
  const before = niceByThread()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-nice-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  // One thread while only ingestion writes, three while a query runs: the governor starts two more.
  const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb, { threadNice: 7, queryThreads: 2, writeThreads: 1, readGraceMs: 100 })
  t.after(() => db.close())
  const reads = await db.connect({ reads: true })
  const writes = await db.connect()
  await writes.run('SELECT 1')
  // The grace after opening ends: the governor lowers DuckDB to one thread (the write mode).
  const opened = niceByThread().size
  for (let i = 0; i < 100 && niceByThread().size >= opened; i++) await new Promise((r) => setTimeout(r, 50))
  const started = niceByThread()
  assert.ok(started.size < opened, 'the write mode stopped some of DuckDB\'s threads')
  const rows = (await reads.runAndReadAll('SELECT count(*) AS n FROM range(3000000) a')).getRowObjects()
  assert.equal(Number(rows[0]!.n), 3_000_000)
  const after = niceByThread()

  for (const [tid, nice] of before) if (after.has(tid)) assert.equal(after.get(tid), nice, `thread ${tid}, there before DuckDB, was changed`)
  const duckdb = [...after].filter(([tid]) => !before.has(tid))
  assert.ok(duckdb.length >= 3, `DuckDB started ${duckdb.length} threads`)
  assert.deepEqual(duckdb.filter(([, nice]) => nice !== 7), [], 'every thread DuckDB started runs at nice 7')
  assert.ok([...after].some(([tid]) => !started.has(tid) && !before.has(tid)), 'the query started threads of its own (read mode)')
  assert.equal(after.get(process.pid), before.get(process.pid))
})
