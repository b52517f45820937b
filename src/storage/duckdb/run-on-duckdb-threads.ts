import bindings from '@duckdb/node-bindings'
import type { DuckDBConnection, DuckDBResultReader, DuckDBValue } from '@duckdb/node-api'

/** How often a running statement's state is checked: from 1 ms, doubling up to this. */
const MAX_POLL_MS = 16

/**
 * Runs one statement (a query: a SELECT, no DDL) so that only DuckDB's own background threads
 * compute it, never a thread of libuv's pool.
 *
 * `connection.runAndReadAll` executes the whole statement inside one libuv work item: the pool
 * thread that calls into DuckDB runs the statement's tasks until it is done. Four heavy queries
 * held all four of the pool's threads, and capture's file writes, gzip and the readiness check,
 * which need the same pool, waited behind them (issue 29: capture completed 0-3 batches in 30 s).
 * Here the statement is prepared on the pool (short), started as a pending result, and left to
 * DuckDB's scheduler threads (`threads` - 1 of them); the event loop only checks its state, which
 * executes nothing, and reads the result once it is ready. So the CPU that queries take is bounded
 * by DuckDB's `threads` setting whatever the number of statements, and no pool thread waits on one.
 *
 * Needs `threads` >= 2 (one scheduler thread at least): with 1 nothing would run the tasks.
 * The statement runs in a transaction of its own, begun before it starts, so starting it (done on
 * the event loop, as the binding offers no other way) never waits on the transaction manager.
 * `connection.interrupt()` stops it; the promise then rejects with DuckDB's interrupt error.
 * Statements on one connection run one after the other, in the order they were issued.
 */
export function runOnDuckDbThreads(c: DuckDBConnection, sql: string, values?: readonly DuckDBValue[]): Promise<DuckDBResultReader> {
  // One statement at a time per connection: another one started on it would close this pending
  // result (DuckDB serialised them on the connection's lock, each waiting on a pool thread).
  const previous = inFlight.get(c) ?? Promise.resolve()
  const mine = previous.catch(() => undefined).then(() => runNow(c, sql, values))
  const tail = mine.catch(() => undefined)
  inFlight.set(c, tail)
  void tail.then(() => {
    if (inFlight.get(c) === tail) inFlight.delete(c)
  })
  return mine
}

const inFlight = new WeakMap<DuckDBConnection, Promise<unknown>>()

async function runNow(c: DuckDBConnection, sql: string, values?: readonly DuckDBValue[]): Promise<DuckDBResultReader> {
  const prepared = await c.prepare(sql)
  let began = false
  try {
    if (values && values.length > 0) prepared.bind(values as DuckDBValue[])
    await c.run('BEGIN TRANSACTION')
    began = true
    const pending = prepared.start()
    const handle = (pending as unknown as { pending_result: bindings.PendingResult }).pending_result
    for (let wait = 1; ; wait = Math.min(MAX_POLL_MS, wait * 2)) {
      const state = bindings.pending_execute_check_state(handle)
      if (state === bindings.PendingState.RESULT_READY) break
      if (state === bindings.PendingState.ERROR) {
        // Also how a finished execution reports itself (DuckDB's C API maps EXECUTION_FINISHED to
        // it): without an error message the result is read as for READY.
        const message = bindings.pending_error(handle)
        if (message) throw new Error(message)
        break
      }
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
    const reader = await pending.readAll()
    await c.run('COMMIT')
    began = false
    return reader
  } finally {
    prepared.destroySync()
    if (began) await c.run('ROLLBACK').catch(() => undefined)
  }
}
