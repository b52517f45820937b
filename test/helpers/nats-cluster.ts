import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { freePort } from './clickhouse.ts'
import { NATS_SERVER } from './nats-server.ts'

/** One node of a test-owned NATS cluster. */
export interface NatsNode {
  name: string
  url: string
  start(): Promise<void>
  kill9(): Promise<void>
}

export interface NatsCluster {
  nodes: NatsNode[]
  /** Every node's client URL, comma-separated (TALLY_NATS_URL). */
  urls: string
  /** The name of the node leading `stream` (JetStream's RAFT leader). */
  streamLeader(stream: string): Promise<string>
  destroy(): Promise<void>
}

/**
 * Three nats-server processes with JetStream on loopback, routed into one cluster (`tally`), each
 * with a store dir of its own under one temp dir. Nodes keep their ports across restarts.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tally-nats-cluster-'))
  const ports = await Promise.all(Array.from({ length: size * 2 }, () => freePort()))
  const routes = Array.from({ length: size }, (_, i) => `nats://127.0.0.1:${ports[size + i]}`).join(',')
  const nodes: NatsNode[] = Array.from({ length: size }, (_, i) => {
    const name = `n${i + 1}`
    let child: ChildProcess | null = null
    let exited: Promise<void> = Promise.resolve()
    const args = ['-a', '127.0.0.1', '-p', String(ports[i]), '-js', '-sd', path.join(root, name), '--server_name', name, '--cluster_name', 'tally', '--cluster', `nats://127.0.0.1:${ports[size + i]}`, '--routes', routes]
    return {
      name,
      url: `nats://127.0.0.1:${ports[i]}`,
      async start() {
        const p = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] })
        child = p
        exited = new Promise((resolve) => p.once('exit', () => resolve()))
        let out = ''
        await new Promise<void>((resolve, reject) => {
          const on = (c: Buffer) => {
            out = (out + c.toString()).slice(-8000)
            if (/Server is ready/.test(out)) resolve()
          }
          p.stdout!.on('data', on)
          p.stderr!.on('data', on)
          void exited.then(() => reject(new Error(`nats-server ${name} exited: ${out}`)))
        })
      },
      async kill9() {
        child?.kill('SIGKILL')
        await exited
        child = null
      },
    }
  })
  await Promise.all(nodes.map((n) => n.start()))
  const urls = nodes.map((n) => n.url).join(',')
  // JetStream is usable once the cluster has elected its metadata leader.
  const nc = await connect({ servers: nodes.map((n) => n.url) })
  try {
    for (let i = 0; ; i++) {
      const ok = await jetstreamManager(nc, { timeout: 2000 }).then((m) => m.getAccountInfo()).then(() => true, () => false)
      if (ok) break
      if (i > 100) throw new Error('the NATS cluster elected no JetStream leader')
      await new Promise((r) => setTimeout(r, 200))
    }
  } finally {
    await nc.close()
  }
  return {
    nodes,
    urls,
    async streamLeader(stream) {
      const c = await connect({ servers: nodes.map((n) => n.url) })
      try {
        const info = await (await jetstreamManager(c)).streams.info(stream)
        const leader = info.cluster?.leader
        if (!leader) throw new Error(`stream ${stream} has no leader`)
        return leader
      } finally {
        await c.close()
      }
    },
    async destroy() {
      await Promise.all(nodes.map((n) => n.kill9()))
      await rm(root, { recursive: true, force: true })
    },
  }
}
