import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import pg from 'pg'

/** The PostgreSQL server for scale-adapter tests; suites skip when it is not set (CI sets it). */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? ''

/**
 * A new, empty database on the test server, dropped when the test ends. Refuses any server URL
 * whose database name lacks a `test` token, so it can never drop a real database.
 */
export async function createTestDatabase(t: TestContext): Promise<string> {
  const admin = new URL(TEST_POSTGRES_URL)
  if (!/test/.test(admin.pathname)) throw new Error(`refusing to use ${admin.pathname}: TEST_POSTGRES_URL must name a *test* database`)
  const name = `tally_test_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await client.connect()
  await client.query(`CREATE DATABASE ${name}`)
  await client.end()
  t.after(async () => {
    const c = new pg.Client({ connectionString: TEST_POSTGRES_URL })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.end()
  })
  const url = new URL(TEST_POSTGRES_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * A new, empty database on the test server for a whole test file (one `before`/`after` pair), so
 * that many tests share one database and clear it between them. Same `test`-token guard.
 */
export async function createFileTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new URL(TEST_POSTGRES_URL)
  if (!/test/.test(admin.pathname)) throw new Error(`refusing to use ${admin.pathname}: TEST_POSTGRES_URL must name a *test* database`)
  const name = `tally_test_${randomBytes(6).toString('hex')}`
  const run = runOnTestServer
  await run(`CREATE DATABASE ${name}`)
  const url = new URL(TEST_POSTGRES_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** Runs one statement on the test server's own database (creating, dropping, locking out test databases). */
export async function runOnTestServer(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
