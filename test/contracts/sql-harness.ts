import { after, before } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { openPgliteSqlClient } from '../../src/storage/pglite/pglite-sql-client.ts'
import { openPostgresSqlClient } from '../../src/storage/postgres/postgres-sql-client.ts'
import type { SqlClient } from '../../src/storage/sql/sql-client.ts'
import { runMigrations } from '../../src/storage/sql/run-migrations.ts'
import { createSqlProjectStore } from '../../src/storage/sql/sql-project-store.ts'
import { createFileTestDatabase } from '../helpers/test-postgres.ts'

/** What a store-contract test gets: the port under test on an empty, migrated metadata database. */
export interface Opened<P> {
  port: P
  close(): Promise<void>
}
export type Open<P> = () => Promise<Opened<P>>
/** Opened with two projects and two users already made (records need an owner and a project). */
export type OpenInWorld<P> = () => Promise<Opened<P> & { world: World }>

/** Two projects of one organization and two users, made through the project store. */
export interface World {
  organizationId: number
  projectId: number
  otherProjectId: number
  userId: number
  otherUserId: number
}

/** A store over a SQL client; the contract runners build each SQL store through this. */
export type MakeStore<P> = (db: SqlClient) => P

/**
 * One migrated metadata database for the whole test file (PGlite in memory, or a new database on the
 * PostgreSQL test server), emptied before every test: node:test runs a file's top-level tests one
 * after another, so they never see each other's rows.
 */
export function sharedSqlDatabase(engine: 'pglite' | 'postgres'): {
  openEmpty<P>(make: MakeStore<P>): Open<P>
  openWithWorld<P>(make: MakeStore<P>): OpenInWorld<P>
} {
  let db: SqlClient | undefined
  let drop: (() => Promise<void>) | undefined
  let tables: string[] = []
  before(async () => {
    if (engine === 'pglite') {
      db = await openPgliteSqlClient('memory://')
      await db.exec(`SET timezone TO 'Pacific/Chatham'`) // one connection: this is every query's zone
    } else {
      const made = await createFileTestDatabase()
      drop = made.drop
      // A zone with an odd offset and daylight saving: a timestamp read or written without its zone shows.
      const tmp = openPostgresSqlClient(made.url, { poolSize: 1 })
      await tmp.exec(`ALTER DATABASE ${new URL(made.url).pathname.slice(1)} SET timezone TO 'Pacific/Chatham'`)
      await tmp.close()
      db = openPostgresSqlClient(made.url, { poolSize: 4 })
      const [zone] = await db.query<{ TimeZone: string }>('SHOW timezone')
      if (zone?.TimeZone !== 'Pacific/Chatham') throw new Error(`session time zone is ${zone?.TimeZone}, not Pacific/Chatham`)
    }
    await runMigrations(db, MIGRATIONS.metadata)
    tables = (
      await db.query<{ t: string }>(
        `SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_migrations' ORDER BY 1`,
      )
    ).map((r) => r.t)
  })
  after(async () => {
    await db?.close()
    await drop?.()
  })
  async function empty(): Promise<SqlClient> {
    if (!db) throw new Error('database not opened')
    await db.exec(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`)
    return db
  }
  return {
    openEmpty: (make) => async () => {
      const q = await empty()
      return { port: make(q), close: async () => {} }
    },
    openWithWorld: (make) => async () => {
      const q = await empty()
      const world = await seedWorld(q)
      return { port: make(q), world, close: async () => {} }
    },
  }
}

async function seedWorld(db: SqlClient): Promise<World> {
  const projects = createSqlProjectStore(db)
  const { organization, user, project } = await projects.bootstrap({
    organizationName: 'Org',
    projectName: 'Default',
    projectApiToken: 'phc_contract_default',
    user: { email: 'owner@example.com', firstName: 'Owner' },
    personalKey: { hash: 'hash-owner', mask: 'phx_...own', label: 'owner' },
  })
  const other = await projects.createProject({ organizationId: organization.id, name: 'Other', apiToken: 'phc_contract_other' })
  const otherUser = await projects.createUser({ organizationId: organization.id, email: 'second@example.com', firstName: 'Second' })
  return { organizationId: organization.id, projectId: project.id, otherProjectId: other.id, userId: user.id, otherUserId: otherUser.id }
}
