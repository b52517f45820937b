import type { FastifyInstance } from 'fastify'
import type { IngestionHealth } from '../ingestion/ingestion-health.ts'

/** What `/_ready` checks: the ingestion state, and a cheap query per store. */
export interface Readiness {
  /** Whether ingestion is blocked (the queue cannot write, the worker cannot store), and why. */
  ingestion(): IngestionHealth
  /** Named store checks: each resolves when the store answers (e.g. `SELECT 1`). */
  stores: Readonly<Record<string, () => Promise<unknown>>>
}

export interface HealthRoutesOptions {
  /** False until the stores are open and the routes registered. */
  isReady: () => boolean
  readiness?: Readiness
  /** A store that has not answered within this is reported as not answering (default 2000 ms). */
  storeTimeoutMs?: number
}

/**
 * `GET /_health`: liveness, "the process is up" (200 once started, 503 `starting` before); it stays
 * 200 while ingestion is blocked, so an orchestrator does not restart a process that is waiting
 * for disk space. `GET /_ready`: readiness, JSON; 503 while ingestion is blocked or a store does
 * not answer, with the reason, so a load balancer sends capture traffic elsewhere meanwhile.
 */
export async function healthRoutes(app: FastifyInstance, opts: HealthRoutesOptions): Promise<void> {
  const timeoutMs = opts.storeTimeoutMs ?? 2000
  // One check per store in flight at a time: a stalled store does not pile up queries.
  const inFlight = new Map<string, Promise<string>>()

  function check(name: string, run: () => Promise<unknown>): Promise<string> {
    let p = inFlight.get(name)
    if (!p) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`did not answer within ${timeoutMs} ms`), timeoutMs)
      })
      const answered = Promise.resolve()
        .then(run)
        .then(() => 'ok', (err: unknown) => `error: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`)
      p = Promise.race([answered, timeout]).finally(() => {
        clearTimeout(timer)
        inFlight.delete(name)
      })
      inFlight.set(name, p)
    }
    return p
  }

  app.get('/_health', async (_req, reply) => {
    if (!opts.isReady()) return reply.code(503).send({ status: 'starting' })
    return { status: 'ok' }
  })

  app.get('/_ready', async (_req, reply) => {
    reply.header('cache-control', 'no-store')
    if (!opts.isReady()) return reply.code(503).send({ status: 'starting', ingestion: null, stores: {} })
    const ingestion = opts.readiness?.ingestion() ?? { blocked: false, reason: null, since: null, components: {} }
    const entries = Object.entries(opts.readiness?.stores ?? {})
    const results = await Promise.all(entries.map(([name, run]) => check(name, run)))
    const stores = Object.fromEntries(entries.map(([name], i) => [name, results[i]!]))
    const storesOk = results.every((r) => r === 'ok')
    const status = ingestion.blocked ? 'ingestion_blocked' : storesOk ? 'ready' : 'store_unavailable'
    return reply.code(status === 'ready' ? 200 : 503).send({ status, ingestion, stores })
  })
}
