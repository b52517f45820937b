import type { Logger } from 'pino'
import type { ClaimedMessage, OutboxStore } from './outbox-store.ts'
import { crashPoint } from '../../shared/crash-points.ts'
import { WebhookRefusedError, type WebhookClient } from './webhook-client.ts'

export interface OutboxSenderOptions {
  /** Tries before a message is dead-lettered (`failed`). */
  maxAttempts: number
  retryMinMs: number
  retryMaxMs: number
  /** Requests in flight at once per channel (a destination, or the project's chat webhook). */
  concurrencyPerChannel: number
  /** Requests started per second per channel. */
  ratePerSecond: number
  /** Pending messages kept per channel; older ones past it are dropped and counted. */
  backlogLimit: number
  pollMs: number
  /** How long a claimed message stays leased to this sender (longer than a request can take). */
  leaseMs: number
}

export type OutboxOutcome = 'sent' | 'retried' | 'failed' | 'dropped'

export interface OutboxSenderDeps {
  store: OutboxStore
  client: WebhookClient
  options: OutboxSenderOptions
  logger: Pick<Logger, 'warn' | 'debug'>
  /** Counted per channel (metrics). */
  onOutcome?: (channel: string, outcome: OutboxOutcome, count: number) => void
}

export interface OutboxSender {
  /** Looks for due messages now instead of at the next poll. */
  wake(): void
  stop(): Promise<void>
}

/**
 * Sends the outbox at least once: leases due messages, POSTs them with their `Idempotency-Key`,
 * marks them sent on a 2xx. 5xx, 408, 429, time-outs and connection errors are tried again with a
 * doubling pause; any other 4xx, a refused address and the last try dead-letter the message. Each
 * channel has its own concurrency and rate, so a slow endpoint holds only its own messages; its
 * backlog is bounded (oldest dropped), so memory and the table never grow without end. Runs beside
 * ingestion, never inside it: a slow endpoint cannot slow a micro-batch.
 */
export function startOutboxSender(deps: OutboxSenderDeps): OutboxSender {
  const { store, client, options: o, logger } = deps
  const buckets = new Map<string, { tokens: number; at: number }>()
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> | null = null
  let stopped = false
  let again = false

  const schedule = (ms: number) => {
    if (stopped) return
    if (timer) clearTimeout(timer)
    timer = setTimeout(tick, ms)
    timer.unref()
  }

  function tick() {
    timer = null
    if (running) {
      again = true
      return
    }
    running = cycle()
      .catch((err) => logger.warn({ err }, 'outbox: a send cycle failed; trying again'))
      .finally(() => {
        running = null
        const more = again
        again = false
        schedule(more ? 0 : o.pollMs)
      })
  }

  async function cycle() {
    for (const [channel, counts] of await store.pendingByChannel()) {
      if (counts.pending <= o.backlogLimit) continue
      const dropped = await store.dropOverBacklog(channel, o.backlogLimit)
      if (dropped > 0) {
        deps.onOutcome?.(channel, 'dropped', dropped)
        logger.warn({ channel, dropped }, 'outbox: backlog over its limit, oldest messages dropped')
      }
    }
    const claimed = await store.claimDue(o.concurrencyPerChannel * 16, o.leaseMs)
    if (claimed.length === 0) return
    crashPoint('outbox.after-claim')
    const byChannel = new Map<string, ClaimedMessage[]>()
    for (const m of claimed) byChannel.set(m.channel, [...(byChannel.get(m.channel) ?? []), m])
    await Promise.all([...byChannel].map(([channel, messages]) => sendChannel(channel, messages)))
    again = true
  }

  async function sendChannel(channel: string, messages: ClaimedMessage[]) {
    const allowed = takeTokens(channel, messages.length)
    const now = messages.slice(0, allowed)
    // Over the channel's rate: due again in a second, without counting a try.
    const held = messages.slice(allowed).map((m) => m.id)
    if (held.length > 0) await store.postpone(held, new Date(Date.now() + 1000))
    let next = 0
    const worker = async () => {
      while (next < now.length) await sendOne(now[next++]!)
    }
    await Promise.all(Array.from({ length: Math.min(o.concurrencyPerChannel, now.length) }, worker))
  }

  function takeTokens(channel: string, wanted: number): number {
    const now = Date.now()
    const b = buckets.get(channel) ?? { tokens: o.ratePerSecond, at: now }
    b.tokens = Math.min(o.ratePerSecond, b.tokens + ((now - b.at) / 1000) * o.ratePerSecond)
    b.at = now
    const n = Math.min(wanted, Math.floor(b.tokens))
    b.tokens -= n
    buckets.set(channel, b)
    return n
  }

  async function sendOne(m: ClaimedMessage) {
    let status: number | null = null
    let error: string
    let retryable: boolean
    try {
      status = (await client.post(m.url, m.body, { ...m.headers, 'idempotency-key': m.idempotencyKey })).status
      if (status >= 200 && status < 300) {
        crashPoint('outbox.after-send')
        await store.markSent(m.id, status)
        deps.onOutcome?.(m.channel, 'sent', 1)
        return
      }
      error = `answered ${status}`
      retryable = status >= 500 || status === 408 || status === 429
    } catch (err) {
      error = err instanceof Error ? err.message : String(err)
      retryable = !(err instanceof WebhookRefusedError) && !(err instanceof TypeError)
    }
    const tries = m.attempts + 1
    if (!retryable || tries >= o.maxAttempts) {
      await store.markFailed(m.id, status, error)
      deps.onOutcome?.(m.channel, 'failed', 1)
      logger.warn({ channel: m.channel, id: m.id, status, error, tries }, 'outbox: message dead-lettered')
      return
    }
    const pause = Math.min(o.retryMaxMs, o.retryMinMs * 2 ** m.attempts)
    await store.markRetry(m.id, new Date(Date.now() + pause), status, error)
    deps.onOutcome?.(m.channel, 'retried', 1)
    logger.debug({ channel: m.channel, id: m.id, status, error, tries }, 'outbox: delivery failed; trying again')
  }

  schedule(0)
  return {
    wake: () => schedule(0),
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
