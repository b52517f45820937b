import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { after } from 'node:test'

/**
 * A ClickHouse server for a test file: TEST_CLICKHOUSE_URL when set (CI's, started by .ci/run), or
 * else a private clickhouse-server this helper starts in the foreground (random loopback ports, its
 * own config, a data dir under os.tmpdir()), stopped when the file's tests end. One server per test
 * file; each app or store gets a database of its own (`freshClickHouseUrl`).
 *
 * Without either (no TEST_CLICKHOUSE_URL and no clickhouse-server binary) `clickHouseAvailable()` is
 * false and the caller skips its ClickHouse tests, printing that it did; CI sets the URL and skips
 * nothing.
 */
const SERVER_BINARY = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server'].find((p) => existsSync(p))

/** Why ClickHouse tests are skipped here, or null when they run. */
export function clickHouseSkipReason(): string | null {
  if (process.env.TEST_CLICKHOUSE_URL) return null
  if (SERVER_BINARY) return null
  return 'no ClickHouse: TEST_CLICKHOUSE_URL is not set and clickhouse-server is not installed'
}

/** The `skip` option for a ClickHouse test; prints once per file that the tests were skipped. */
export function skipWithoutClickHouse(): string | false {
  const reason = clickHouseSkipReason()
  if (reason === null) return false
  if (!printed) {
    printed = true
    console.log(`# SKIPPED ClickHouse tests of this file: ${reason}`)
  }
  return reason
}
let printed = false

let server: Promise<{ url: string }> | null = null

/** The base URL (`http://default:@127.0.0.1:port`) of this file's server, started on first use. */
export function clickHouseBaseUrl(): Promise<{ url: string }> {
  if (server) return server
  const env = process.env.TEST_CLICKHOUSE_URL
  server = env ? Promise.resolve({ url: baseOf(env) }) : startPrivateServer()
  return server
}

/** A URL naming a database no one else uses on this file's server; the database is dropped after the file. */
export async function freshClickHouseUrl(): Promise<string> {
  const { url } = await clickHouseBaseUrl()
  const name = `tally_test_${randomBytes(6).toString('hex')}`
  databases.push(name)
  return `${url}/${name}`
}
const databases: string[] = []

/** The URL without its database path. */
function baseOf(url: string): string {
  const u = new URL(url)
  u.pathname = '/'
  return u.toString().replace(/\/$/, '')
}

/** Runs a statement on this file's server (database `default`), e.g. to drop or inspect a test database. */
export async function clickHouseStatement(sql: string): Promise<string> {
  const { url } = await clickHouseBaseUrl()
  const u = new URL(url)
  const auth: Record<string, string> = {}
  if (u.username) auth.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`
  const res = await fetch(`${u.protocol}//${u.host}/`, { method: 'POST', body: sql, headers: auth })
  const text = await res.text()
  if (!res.ok) throw new Error(`ClickHouse: ${text}`)
  return text
}

// Registered when the file imports this helper (node:test binds `after` to the test running when it
// is called): drops the file's databases on a shared (CI) server, or stops the private one.
after(async () => {
  if (!server) return
  if (process.env.TEST_CLICKHOUSE_URL) {
    for (const name of databases) await clickHouseStatement(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined)
  } else await stopPrivateServer()
})

let shared: PrivateClickHouse | null = null

async function startPrivateServer(): Promise<{ url: string }> {
  shared = await privateClickHouse()
  return { url: shared.url }
}

async function stopPrivateServer(): Promise<void> {
  await shared?.destroy()
  shared = null
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })
}

/** A clickhouse-server of the caller's own, which it may stop and start again on the same data dir and ports. */
export interface PrivateClickHouse {
  /** `http://default:@127.0.0.1:<port>` (no database). */
  url: string
  /** Stops the server (SIGTERM, waits for its exit); the data stays. */
  stop(): Promise<void>
  /** `kill -9`: no shutdown at all (the data stays); resolves once the process is gone. */
  kill9(): Promise<void>
  /** Starts it again (resolves once it answers /ping). */
  start(): Promise<void>
  /** Stops it and removes its data dir. */
  destroy(): Promise<void>
  /** The running server's process id (benchmarks read its CPU time), or null. */
  pid(): number | null
}

/** Options of a private server: fixed ports (a cluster's replicas name each other's) and more config. */
export interface PrivateClickHouseOptions {
  httpPort?: number
  tcpPort?: number
  /** XML elements added inside `<yandex>` (ZooKeeper, macros, remote_servers...). */
  extraConfig?: string
}

/** Starts a private clickhouse-server (random loopback ports, its own config, a data dir under os.tmpdir()). */
export async function privateClickHouse(opts: PrivateClickHouseOptions = {}): Promise<PrivateClickHouse> {
  if (!SERVER_BINARY) throw new Error('clickhouse-server is not installed')
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-clickhouse-'))
  const [http, tcp] = [opts.httpPort ?? (await freePort()), opts.tcpPort ?? (await freePort())]
  const config = path.join(dir, 'config.xml')
  await writeFile(config, serverConfig(dir, http, tcp, opts.extraConfig))
  await writeFile(path.join(dir, 'users.xml'), USERS)
  let proc: ChildProcess | null = null
  async function start(): Promise<void> {
    const p = spawn(SERVER_BINARY!, [`--config-file=${config}`], { stdio: ['ignore', 'ignore', 'pipe'] })
    proc = p
    let stderr = ''
    p.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000)
    })
    for (let i = 0; i < 400; i++) {
      if (p.exitCode !== null) throw new Error(`clickhouse-server exited (${p.exitCode}): ${stderr}`)
      const ok = await fetch(`http://127.0.0.1:${http}/ping`).then((r) => r.ok, () => false)
      if (ok) return
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`clickhouse-server did not answer on port ${http}: ${stderr}`)
  }
  async function stop(): Promise<void> {
    const p = proc
    proc = null
    if (!p || p.exitCode !== null) return
    const exited = new Promise((r) => p.once('exit', r))
    p.kill('SIGTERM')
    const timer = setTimeout(() => p.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  async function kill9(): Promise<void> {
    const p = proc
    proc = null
    if (!p || p.exitCode !== null) return
    const exited = new Promise((r) => p.once('exit', r))
    p.kill('SIGKILL')
    await exited
  }
  await start()
  return {
    url: `http://default:@127.0.0.1:${http}`,
    start,
    stop,
    kill9,
    pid: () => proc?.pid ?? null,
    async destroy() {
      await stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** A minimal config: loopback only, the given ports, everything under `dir`, UTC, warnings to stderr. */
export function serverConfig(dir: string, httpPort: number, tcpPort: number, extraConfig = ''): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/data/tmp/</tmp_path>
  <user_files_path>${dir}/data/user_files/</user_files_path>
  <format_schema_path>${dir}/data/format_schemas/</format_schema_path>
  <mark_cache_size>5368709</mark_cache_size>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <max_concurrent_queries>100</max_concurrent_queries>${extraConfig}
</yandex>
`
}

const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
