import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { freePort, privateClickHouse, type PrivateClickHouse } from './clickhouse.ts'

/** Debian's `zookeeper` package (3.8): its jar and its config dir (log4j) for the classpath. */
const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar'
const ZOOKEEPER_CONF = '/etc/zookeeper/conf'
export const hasZooKeeper = existsSync(ZOOKEEPER_JAR) && existsSync('/usr/bin/java')

export interface PrivateZooKeeper {
  /** The client port on 127.0.0.1. */
  port: number
  destroy(): Promise<void>
}

/**
 * A standalone ZooKeeper of the caller's own, in the foreground (`ZooKeeperServerMain`, see
 * ../shared/reference/clickhouse-nats.md): a loopback port, a data dir under os.tmpdir(), no admin
 * server; resolves once it answers `ruok` with `imok`.
 */
export async function privateZooKeeper(): Promise<PrivateZooKeeper> {
  if (!hasZooKeeper) throw new Error('zookeeper is not installed (apt-get install zookeeper)')
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-zookeeper-'))
  const port = await freePort()
  const cfg = path.join(dir, 'zoo.cfg')
  await writeFile(
    cfg,
    [`dataDir=${dir}/data`, `clientPort=${port}`, 'clientPortAddress=127.0.0.1', 'tickTime=2000', 'admin.enableServer=false', '4lw.commands.whitelist=ruok', 'maxClientCnxns=0', ''].join('\n'),
  )
  const p: ChildProcess = spawn('/usr/bin/java', ['-Xmx256m', '-cp', `${ZOOKEEPER_CONF}:${ZOOKEEPER_JAR}`, 'org.apache.zookeeper.server.ZooKeeperServerMain', cfg], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ZOO_LOG_DIR: dir },
  })
  let stderr = ''
  p.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  const exited = new Promise((r) => p.once('exit', r))
  const destroy = async () => {
    if (p.exitCode === null) {
      p.kill('SIGKILL')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  }
  for (let i = 0; i < 600; i++) {
    if (p.exitCode !== null) break
    if ((await ruok(port)) === 'imok') return { port, destroy }
    await new Promise((r) => setTimeout(r, 100))
  }
  await destroy()
  throw new Error(`zookeeper did not answer ruok on port ${port}: ${stderr}`)
}

/** ZooKeeper's four-letter `ruok` (the answer, '' when the port does not answer). */
function ruok(port: number): Promise<string> {
  return new Promise((resolve) => {
    let answer = ''
    const s = net.connect(port, '127.0.0.1', () => s.write('ruok'))
    s.on('data', (d) => (answer += d.toString()))
    s.on('close', () => resolve(answer))
    s.on('error', () => resolve(''))
  })
}

/** One ClickHouse replica of a test cluster, with its ClickHouse server. */
export interface ClickHouseReplica extends PrivateClickHouse {
  /** `r1`, `r2`...: its `{replica}` macro. */
  readonly name: string
}

/**
 * `size` clickhouse-servers on loopback, one shard with `size` replicas of cluster `cluster`
 * (`remote_servers`), coordinated by the ZooKeeper on `zookeeperPort`: each has the macros
 * `{shard}` = 1 and `{replica}` = its name, an interserver HTTP port (replicas fetch parts from each
 * other) and the distributed DDL queue (ON CLUSTER). Ports are fixed up front: they stay across restarts.
 */
export async function clickHouseReplicas(size: number, zookeeperPort: number, cluster = 'tally'): Promise<ClickHouseReplica[]> {
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ http: await freePort(), tcp: await freePort(), interserver: await freePort() })))
  const replicas = ports.map((p) => `<replica><host>127.0.0.1</host><port>${p.tcp}</port></replica>`).join('')
  const started = await Promise.all(
    ports.map(async (p, i) => {
      const name = `r${i + 1}`
      const extraConfig = `
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>${p.interserver}</interserver_http_port>
  <zookeeper><node><host>127.0.0.1</host><port>${zookeeperPort}</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>
  <macros><shard>1</shard><replica>${name}</replica></macros>
  <remote_servers><${cluster}><shard><internal_replication>true</internal_replication>${replicas}</shard></${cluster}></remote_servers>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>`
      const server = await privateClickHouse({ httpPort: p.http, tcpPort: p.tcp, extraConfig })
      return Object.assign(server, { name })
    }),
  )
  return started
}
