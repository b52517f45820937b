import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { Change, ChangeBus } from '../../shared/change-bus.ts'

const CHANNEL = 'tally_changes'
/** PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more: a larger person change becomes "the whole project". */
const MAX_PAYLOAD = 7000

interface Logger {
  warn(obj: object, msg: string): void
}

/**
 * The ChangeBus on PostgreSQL LISTEN/NOTIFY: one dedicated connection listens on `tally_changes`;
 * publishes go through `pg_notify` on a small pool. Every process hears every change (its own are
 * skipped by an origin id). The listener reconnects on its own, and reports `lost` when it does.
 */
export function openPgChangeBus(url: string, logger?: Logger): ChangeBus {
  const origin = randomUUID()
  const subscribers: Array<(c: Change | { kind: 'lost' }) => void> = []
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 })
  pool.on('error', () => {})
  let closed = false
  let client: pg.Client | null = null
  let retry: NodeJS.Timeout | null = null
  let everConnected = false

  const emit = (c: Change | { kind: 'lost' }) => {
    for (const fn of subscribers) fn(c)
  }
  const listen = async () => {
    retry = null
    if (closed) return
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
    c.on('error', () => {})
    c.on('notification', (n) => {
      if (!n.payload) return
      try {
        const { o, c: change } = JSON.parse(n.payload) as { o: string; c: Change }
        if (o !== origin) emit(change)
      } catch {
        // Not ours: another writer on the channel.
      }
    })
    c.on('end', () => {
      client = null
      if (!closed) {
        logger?.warn({}, 'change bus: lost the PostgreSQL LISTEN connection; reconnecting (caches are dropped)')
        retry = setTimeout(() => void listen(), 250)
      }
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${CHANNEL}`)
      client = c
      if (everConnected) emit({ kind: 'lost' })
      everConnected = true
    } catch {
      await c.end().catch(() => undefined)
      if (!closed && !retry) retry = setTimeout(() => void listen(), 1000)
    }
  }
  void listen()

  return {
    publish(change) {
      let payload = JSON.stringify({ o: origin, c: change })
      if (payload.length > MAX_PAYLOAD && change.kind === 'persons') payload = JSON.stringify({ o: origin, c: { ...change, distinctIds: null } })
      pool.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]).catch((err: unknown) => {
        logger?.warn({ err: String(err), change: change.kind }, 'change bus: a change could not be published; other processes keep their cache until its TTL')
      })
    },
    subscribe(fn) {
      subscribers.push(fn)
    },
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      await client?.end().catch(() => undefined)
      await pool.end().catch(() => undefined)
    },
  }
}
