import { test, type TestContext } from 'node:test'
import { freshClickHouseUrl, skipWithoutClickHouse } from './clickhouse.ts'

/** The event stores an app can run on: embedded DuckDB, or ClickHouse (TALLY_CLICKHOUSE_URL). */
export type Engine = 'duckdb' | 'clickhouse'
export const ENGINES: readonly Engine[] = ['duckdb', 'clickhouse']

/**
 * One test body, two stacks: registers `name [duckdb]` and `name [clickhouse]`. The ClickHouse run is
 * skipped, with a printed line, only where no ClickHouse exists (see clickhouse.ts); CI runs both.
 */
export function testOnEachEngine(name: string, fn: (t: TestContext, engine: Engine) => Promise<void>, opts: { timeout?: number; skip?: string | false } = {}): void {
  for (const engine of ENGINES) {
    // The test's own condition (e.g. no NATS here) first; then, for ClickHouse, whether one runs here.
    const skip = opts.skip || (engine === 'clickhouse' ? skipWithoutClickHouse() : false)
    test(`${name} [${engine}]`, { ...opts, skip }, (t) => fn(t, engine))
  }
}

/** The env that puts an app's events on `engine`: for ClickHouse a database of its own on the file's server. */
export async function engineEnv(engine: Engine | undefined): Promise<Record<string, string>> {
  return engine === 'clickhouse' ? { TALLY_CLICKHOUSE_URL: await freshClickHouseUrl() } : {}
}
