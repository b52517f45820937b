import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './clickhouse.ts'

const run = promisify(execFile)

/** Debian's PostgreSQL binaries (the newest installed major), or null. */
export const PG_BIN: string | null = (() => {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const majors = readdirSync(root).filter((d) => existsSync(path.join(root, d, 'bin', 'initdb'))).sort((a, b) => Number(a) - Number(b))
  return majors.length ? path.join(root, majors.at(-1)!, 'bin') : null
})()

/** A PostgreSQL cluster of the caller's own: initdb into a temp dir, pg_ctl on a loopback port. */
export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (a database created at start). */
  url: string
  /** `pg_ctl restart -m fast`: every connection is cut, the server is back when it resolves. */
  restart(): Promise<void>
  /** Stops it (fast) and removes its data dir. */
  destroy(): Promise<void>
}

/**
 * initdb (as the `postgres` user when run as root: PostgreSQL refuses root) into a temp dir and
 * starts the server on a free loopback port, trust auth, with a database named `tally_cluster_test`.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  if (!PG_BIN) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql/*/bin')
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-pg-'))
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    await chown(dir, Number(stdout.trim()), Number(gid.trim()))
  }
  const bin = (name: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(PG_BIN!, name), ...args]) : run(path.join(PG_BIN!, name), args))
  const data = path.join(dir, 'data')
  const port = await freePort()
  await bin('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'])
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`
  const ctl = (args: string[]) => bin('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', ...args])
  await ctl(['-o', opts, 'start'])
  await run(path.join(PG_BIN, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', 'CREATE DATABASE tally_cluster_test'])
  return {
    url: `postgres://postgres@127.0.0.1:${port}/tally_cluster_test`,
    async restart() {
      await ctl(['-m', 'fast', '-o', opts, 'restart'])
    },
    async destroy() {
      await ctl(['-m', 'immediate', 'stop']).catch(() => undefined)
      await rm(dir, { recursive: true, force: true })
    },
  }
}
