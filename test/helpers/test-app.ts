import { createHash } from 'node:crypto'
import { cpSync, existsSync, realpathSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, type TestContext } from 'node:test'
import pino, { type Logger } from 'pino'
import type { EventStore } from '../../src/ingestion/event-store.ts'
import { createApp, type TallyApp } from '../../src/app/create-app.ts'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { loadConfig, type Config } from '../../src/config/load-config.ts'
import { generateToken } from '../../src/shared/ids.ts'
import { initPgliteDataDir } from '../../src/storage/pglite/init-pglite-data-dir.ts'
import { openDuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { engineEnv, type Engine } from './engines.ts'

export interface TestApp extends TallyApp {
  dataDir: string
  config: Config
  projectKey: string
  personalKey: string
  /** `Authorization` header of the bootstrap user. */
  auth: { authorization: string }
  projectId: number
}

/**
 * Migrated, empty store templates, made once per migration set and shared by every test process of a
 * run (os.tmpdir()): a new test app copies them instead of creating and migrating its stores.
 * - metadata: a PGlite data dir (copy 0.04-0.07 s on a tmpfs, against ~3 s for initdb or ~0.8 s for
 *   PGlite writing a dump's 1,145 files one by one);
 * - events: DuckDB's file (open + migrate + close of a new file ~80-120 ms CPU, of a copy ~50-70).
 */
const TEMPLATES = {
  metadata: { migrations: MIGRATIONS.metadata, make: (dir: string) => initPgliteDataDir(dir, MIGRATIONS.metadata) },
  events: {
    migrations: MIGRATIONS.duckdb,
    make: async (dir: string) => (await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb)).close(),
  },
}

/**
 * The template dir of `kind`, named by a hash of its migrations (a new migration makes a new one). The
 * first process to need it makes it aside, under a lock file holding its pid, and renames it into
 * place; the others wait for it rather than make their own: initdb costs ~11 s of CPU (the two first
 * test files of a run both made it). A lock whose process is gone is taken over.
 */
async function templateDir(kind: keyof typeof TEMPLATES): Promise<string> {
  const { migrations, make } = TEMPLATES[kind]
  const files = (await readdir(migrations)).sort()
  const h = createHash('sha256')
  for (const f of files) h.update(f).update(await readFile(path.join(migrations, f)))
  const dir = path.join(os.tmpdir(), `tally-${kind}-template-${h.digest('hex').slice(0, 16)}`)
  const lock = `${dir}.lock`
  while (!existsSync(dir)) {
    if (await takeLock(lock)) {
      try {
        const tmp = `${dir}.${process.pid}.tmp`
        await rm(tmp, { recursive: true, force: true })
        await make(tmp)
        await rename(tmp, dir)
      } finally {
        await rm(lock, { force: true })
      }
    } else await new Promise((r) => setTimeout(r, 100))
  }
  return dir
}

/** Creates `lock` with this process's pid; false while another live process holds it. */
async function takeLock(lock: string): Promise<boolean> {
  try {
    await writeFile(lock, String(process.pid), { flag: 'wx' })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
  const holder = Number(await readFile(lock, 'utf8').catch(() => ''))
  if (holder ? isAlive(holder) : Date.now() - (await stat(lock).then((s) => s.mtimeMs, () => 0)) < 10_000) return false
  // Its holder died (or died between creating it and writing its pid): the caller tries again.
  await rm(lock, { force: true })
  return false
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * A copy of a data dir. Synchronous on purpose: the promise-based fs.cp took ~0.3 s for the PGlite
 * template's 1,145 files, cpSync 0.05-0.13 s on a tmpfs.
 */
export function copyDataDir(from: string, to: string): void {
  // A store's dir may be a symlink to another disk (disk-full.e2e mounts a small one): the copy goes
  // into the dir it points to (cpSync refuses to overwrite the link itself).
  cpSync(from, existsSync(to) ? realpathSync(to) : to, { recursive: true })
}

/** Env for a test app: fixed keys so tests can authenticate; extra env merged in. */
export function testEnv(dataDir: string, extra: Record<string, string> = {}) {
  return {
    TALLY_DATA_DIR: dataDir,
    TALLY_PROJECT_API_KEY: generateToken('phc_'),
    TALLY_PERSONAL_API_KEY: generateToken('phx_'),
    TALLY_LOG_LEVEL: 'silent',
    ...extra,
  }
}

/** A whole Tally on a fresh embedded data dir, closed (and its dir removed) when the test ends. */
export async function buildTestApp(
  t: TestContext,
  opts: { env?: Record<string, string>; dataDir?: string; logger?: Logger; wrapEventStore?: (s: EventStore) => EventStore; engine?: Engine } = {},
): Promise<TestApp> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'tally-test-')))
  const env = testEnv(dataDir, { ...(await engineEnv(opts.engine)), ...opts.env })
  const config = loadConfig({}, env)
  const logger = opts.logger ?? pino({ level: env.TALLY_LOG_LEVEL })
  const metaDir = path.join(dataDir, 'metadata')
  if (!config.storage.metadataUrl && !existsSync(path.join(metaDir, 'PG_VERSION'))) {
    copyDataDir(await templateDir('metadata'), metaDir)
  }
  const eventsDir = path.join(dataDir, 'events')
  if (!config.storage.clickhouseUrl && !existsSync(path.join(eventsDir, 'events.duckdb'))) {
    copyDataDir(await templateDir('events'), eventsDir)
  }
  const app = await createApp(config, logger, { wrapEventStore: opts.wrapEventStore })
  t.after(async () => {
    await app.close()
    if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true })
  })
  const projects = await app.services.projects.listProjects()
  return {
    ...app,
    dataDir,
    config,
    projectKey: env.TALLY_PROJECT_API_KEY,
    personalKey: env.TALLY_PERSONAL_API_KEY,
    auth: { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}` },
    projectId: projects[0].id,
  }
}

/**
 * Test apps shared by the tests of one file: `app(engine)` builds one per engine with `opts` the first
 * time a test asks for it, and every app is closed when the file's tests end. Only for tests that
 * stay independent on one app: they write nothing another test of the file reads (refused requests,
 * or data under names of their own). Call it at a file's top level (it registers the closing hook).
 * A test app costs ~1.2-1.7 s CPU to build and close (capture-errors.e2e: 30 of them, 50 s CPU).
 */
export function fileTestApps(opts: { env?: Record<string, string> } = {}): (engine?: Engine) => Promise<TestApp> {
  const cleanups: Array<() => Promise<void>> = []
  const apps = new Map<Engine, Promise<TestApp>>()
  after(async () => {
    for (const close of cleanups.reverse()) await close()
  })
  const hooks = { after: (fn: () => Promise<void>) => cleanups.push(fn) } as unknown as TestContext
  return (engine = 'duckdb') => {
    if (!apps.has(engine)) apps.set(engine, buildTestApp(hooks, { engine, env: opts.env }))
    return apps.get(engine)!
  }
}

/**
 * A project of its own for each test on one app shared by the file's tests: `await project()` makes a
 * new project in the bootstrap organisation (the owner and its personal key are members, as in PostHog)
 * and returns the shared app (one per engine) seen from it (`projectId`, `projectKey` are the new project's). For
 * tests whose state lives in a project (dashboards, insights, actions, flags, cohorts, persons): their
 * lists and counts stay their own. Not for tests of instance-wide state (users, sign-in, the owner's
 * current project) nor for restarts: those build their own app. Call it at a file's top level.
 */
export function fileTestProjects(opts: { env?: Record<string, string> } = {}): (engine?: Engine) => Promise<TestApp> {
  const shared = fileTestApps(opts)
  let made = 0
  return async (engine) => {
    const app = await shared(engine)
    const { project, apiToken } = await app.services.projects.createProject(`Test project ${++made}`)
    return { ...app, projectId: project.id, projectKey: apiToken }
  }
}
