import type { Logger } from 'pino'
import type { ClaimedMessage, OutboxStore, SendOutcome } from './outbox-store.ts'
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
  /** How often the outbox is looked at without a wake-up (retries coming due), and the backlog checked. */
  pollMs: number
  /** How long a claimed message stays leased to this sender (longer than a request can take). */
  leaseMs: number
  /** Settled messages (sent, failed, dropped) queued longer ago than this are deleted (hourly, in steps). */
  keepSettledMs: number
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

/** How long the first outcome waits for others to be written with it. */
const SETTLE_DELAY_MS = 20

/** The backlog is checked every this many polls. */
const BACKLOG_CHECK_POLLS = 5

/** Settled messages past their keep are deleted this often (and once at start), this many per statement. */
const TRIM_EVERY_MS = 3_600_000
const TRIM_STEP = 5000

/** A channel's messages in hand: queued (claimed, not started) and in flight. */
interface Lane {
  queue: ClaimedMessage[]
  active: number
  tokens: number
  tokensAt: number
}

/**
 * Sends the outbox at least once: leases due messages, POSTs them with their `Idempotency-Key`,
 * marks them sent on a 2xx. 5xx, 408, 429, time-outs and connection errors are tried again with a
 * doubling pause; any other 4xx, a refused address and the last try dead-letter the message.
 *
 * Each channel is a lane with its own concurrency and rate: a slow endpoint holds only its own
 * messages, and the others keep flowing. A lane holds at most a few rounds of its concurrency
 * (claims skip full lanes), so a lease (longer than four time-outs) outlasts the wait of every
 * message in hand. Outcomes are written in batches, one statement for whatever finished while the
 * previous write ran; claims are one statement too. The backlog is bounded per channel (oldest
 * dropped) and settled messages are deleted after `keepSettledMs`, so memory and the table never grow
 * without end. Runs beside ingestion, never inside it.
 */
export function startOutboxSender(deps: OutboxSenderDeps): OutboxSender {
  const { store, client, options: o, logger } = deps
  const lanes = new Map<string, Lane>()
  /** Messages in hand (queued or in flight) per lane at most; claims top a lane up from half of it. */
  const laneCap = o.concurrencyPerChannel * 4
  const claimLimit = Math.max(laneCap * 4, 200)
  let stopped = false
  let pollTimer: NodeJS.Timeout | null = null
  let filling: Promise<void> | null = null
  let fillAgain = false
  /** The last claim found nothing due: lanes draining do not claim again until a wake or poll. */
  let exhausted = false
  const outcomes: SendOutcome[] = []
  /** Ids claimed and not yet written back (queued, in flight, or their outcome unwritten): no claim returns them. */
  const inHand = new Set<number>()
  let flushing: Promise<void> | null = null
  let flushTimer: NodeJS.Timeout | null = null
  const idle = new Set<() => void>()

  // ---- claiming ----

  function fill() {
    if (stopped) return
    if (filling) {
      fillAgain = true
      return
    }
    filling = claim()
      .catch((err) => logger.warn({ err }, 'outbox: claiming due messages failed; trying again at the next poll'))
      .finally(() => {
        filling = null
        if (fillAgain && !stopped) {
          fillAgain = false
          fill()
        }
        settleIdle()
      })
  }

  async function claim() {
    const skip = [...lanes].filter(([, l]) => laneLoad(l) > laneCap / 2).map(([channel]) => channel)
    const claimed = await store.claimDue(claimLimit, o.leaseMs, { perChannel: laneCap, skip, exclude: [...inHand] })
    for (const m of claimed) inHand.add(m.id)
    exhausted = claimed.length === 0
    if (claimed.length === 0) return
    crashPoint('outbox.after-claim')
    const byChannel = new Map<string, ClaimedMessage[]>()
    for (const m of claimed) {
      const list = byChannel.get(m.channel)
      if (list) list.push(m)
      else byChannel.set(m.channel, [m])
    }
    const held: number[] = []
    for (const [channel, messages] of byChannel) {
      const lane = laneOf(channel)
      const allowed = takeTokens(lane, messages.length)
      for (let i = 0; i < messages.length; i++) {
        if (i < allowed && !stopped) lane.queue.push(messages[i]!)
        else held.push(messages[i]!.id)
      }
      run(lane)
    }
    // Over the channel's rate: due again in a second, without counting a try.
    if (held.length > 0) await release(held, new Date(Date.now() + 1000))
  }

  /** Due again at `until` without a try counted, and out of hand. */
  async function release(ids: number[], until: Date) {
    try {
      await store.postpone(ids, until)
    } finally {
      for (const id of ids) inHand.delete(id)
    }
  }

  function laneOf(channel: string): Lane {
    let lane = lanes.get(channel)
    if (!lane) lanes.set(channel, (lane = { queue: [], active: 0, tokens: o.ratePerSecond, tokensAt: Date.now() }))
    return lane
  }

  const laneLoad = (l: Lane) => l.queue.length + l.active

  function takeTokens(lane: Lane, wanted: number): number {
    const now = Date.now()
    lane.tokens = Math.min(o.ratePerSecond, lane.tokens + ((now - lane.tokensAt) / 1000) * o.ratePerSecond)
    lane.tokensAt = now
    const n = Math.min(wanted, Math.floor(lane.tokens))
    lane.tokens -= n
    return n
  }

  // ---- sending ----

  function run(lane: Lane) {
    while (lane.active < o.concurrencyPerChannel && lane.queue.length > 0) {
      const m = lane.queue.shift()!
      lane.active++
      void sendOne(m).then((outcome) => {
        lane.active--
        record(m.channel, outcome)
        if (!stopped) run(lane)
        // Topped up from half: the next claim arrives before the lane runs dry.
        if (laneLoad(lane) === Math.floor(laneCap / 2) && !exhausted) fill()
        settleIdle()
      })
    }
  }

  async function sendOne(m: ClaimedMessage): Promise<SendOutcome> {
    let status: number | null = null
    let error: string
    let retryable: boolean
    try {
      status = (await client.post(m.url, m.body, { ...m.headers, 'idempotency-key': m.idempotencyKey })).status
      if (status >= 200 && status < 300) {
        crashPoint('outbox.after-send')
        return { id: m.id, status: 'sent', httpStatus: status }
      }
      error = `answered ${status}`
      retryable = status >= 500 || status === 408 || status === 429
    } catch (err) {
      error = err instanceof Error ? err.message : String(err)
      retryable = !isPermanent(err)
    }
    const tries = m.attempts + 1
    if (!retryable || tries >= o.maxAttempts) {
      logger.warn({ channel: m.channel, id: m.id, status, error, tries }, 'outbox: message dead-lettered')
      return { id: m.id, status: 'failed', httpStatus: status, error }
    }
    logger.debug({ channel: m.channel, id: m.id, status, error, tries }, 'outbox: delivery failed; trying again')
    const pause = Math.min(o.retryMaxMs, o.retryMinMs * 2 ** m.attempts)
    return { id: m.id, status: 'retry', retryAt: new Date(Date.now() + pause), httpStatus: status, error }
  }

  // ---- recording outcomes, batched ----

  const counted: Record<SendOutcome['status'], OutboxOutcome> = { sent: 'sent', retry: 'retried', failed: 'failed' }

  function record(channel: string, outcome: SendOutcome) {
    outcomes.push(outcome)
    deps.onOutcome?.(channel, counted[outcome.status], 1)
    flush()
  }

  /**
   * Outcomes are written together a moment after the first one: a query on the embedded store
   * blocks the event loop, so writing as each answer arrives would mean one statement per message.
   */
  function flush() {
    if (flushing || flushTimer || outcomes.length === 0) return
    flushTimer = setTimeout(() => {
      flushTimer = null
      const batch = outcomes.splice(0)
      flushing = store
        .settle(batch)
        .catch((err) => {
          // Not recorded: the leases run out and the messages are sent again (at least once).
          logger.warn({ err, messages: batch.length }, 'outbox: recording send outcomes failed')
        })
        .finally(() => {
          for (const outcome of batch) inHand.delete(outcome.id)
          flushing = null
          flush()
          settleIdle()
        })
    }, SETTLE_DELAY_MS)
  }

  // ---- polling, backlog, stop ----

  let backlogCheckedAt = 0
  let trimmedAt = 0

  async function poll() {
    pollTimer = null
    // Counting the backlog reads every pending message: every few polls is often enough.
    if (Date.now() - backlogCheckedAt >= BACKLOG_CHECK_POLLS * o.pollMs) {
      backlogCheckedAt = Date.now()
      await checkBacklog()
    }
    if (Date.now() - trimmedAt >= TRIM_EVERY_MS) {
      trimmedAt = Date.now()
      await trimSettled()
    }
    exhausted = false
    fill()
    if (!stopped) {
      pollTimer = setTimeout(() => void poll(), o.pollMs)
      pollTimer.unref()
    }
  }

  async function checkBacklog() {
    try {
      for (const [channel, counts] of await store.pendingByChannel()) {
        if (counts.pending <= o.backlogLimit) continue
        const dropped = await store.dropOverBacklog(channel, o.backlogLimit)
        if (dropped > 0) {
          deps.onOutcome?.(channel, 'dropped', dropped)
          logger.warn({ channel, dropped }, 'outbox: backlog over its limit, oldest messages dropped')
        }
      }
    } catch (err) {
      logger.warn({ err }, 'outbox: checking the backlog failed; trying again')
    }
  }

  /** Deletes settled messages past their keep, a step at a time (several senders may do it at once). */
  async function trimSettled() {
    try {
      const before = new Date(Date.now() - o.keepSettledMs)
      let deleted = 0
      for (;;) {
        const n = await store.deleteSettled(before, TRIM_STEP)
        deleted += n
        if (n < TRIM_STEP || stopped) break
      }
      if (deleted > 0) logger.debug({ deleted, before }, 'outbox: settled messages past their keep deleted')
    } catch (err) {
      logger.warn({ err }, 'outbox: deleting settled messages failed; trying again in an hour')
    }
  }

  /** Resolves waiters once nothing is claimed, sending or being written. */
  function settleIdle() {
    if (filling || flushing || flushTimer || outcomes.length > 0) return
    for (const l of lanes.values()) if (l.active > 0) return
    for (const resolve of idle) resolve()
    idle.clear()
  }

  void poll()
  return {
    wake() {
      exhausted = false
      fill()
    },
    async stop() {
      stopped = true
      if (pollTimer) clearTimeout(pollTimer)
      // Claimed but not started: released now, so another sender (or the next start) takes them at once.
      const unsent = [...lanes.values()].flatMap((l) => l.queue.splice(0).map((m) => m.id))
      await new Promise<void>((resolve) => {
        idle.add(resolve)
        settleIdle()
      })
      if (unsent.length > 0) await release(unsent, new Date()).catch((err) => logger.warn({ err }, 'outbox: releasing unsent messages failed'))
    },
  }
}

/** Errors a later try cannot cure: a refused address, a request the client will not make. */
function isPermanent(err: unknown): boolean {
  return err instanceof WebhookRefusedError || err instanceof TypeError || (err as { code?: string }).code === 'UND_ERR_INVALID_ARG'
}
