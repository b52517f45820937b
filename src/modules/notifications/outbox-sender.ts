import type { Logger } from 'pino'
import type { BatchOutcome, ClaimedMessage, OutboxStore, SendOutcome, UnsentMessage } from './outbox-store.ts'
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

/** A channel's messages in hand: queued (claimed, not started) and in flight, and its rate's tokens. */
interface Lane {
  queue: ClaimedMessage[]
  active: number
  tokens: number
  tokensAt: number
  /** Set while the lane waits for a token. */
  paced: NodeJS.Timeout | null
}

/** What became of a message: sent, or not (due again at `retryAt`, or dead-lettered). */
type TryOutcome = { status: 'sent'; httpStatus: number } | Omit<UnsentMessage, 'message'>

/** A batch row in hand: its messages without an outcome yet, and what becomes of those not sent. */
interface BatchInHand {
  left: number
  httpStatus: number | null
  unsent: UnsentMessage[]
}

/**
 * Sends the outbox at least once: leases due rows (a micro-batch's messages for a channel, or a
 * message of its own), POSTs each message with its `Idempotency-Key`, and writes what became of
 * them. 5xx, 408, 429, time-outs and connection errors are tried again with a doubling pause; any
 * other 4xx, a refused address and the last try dead-letter the message. A batch row is done once
 * each of its messages has an outcome: one write for it, plus a row of its own for each message it
 * did not send (a retry, a dead letter, or one not tried before a stop).
 *
 * Each channel is a lane with its own concurrency and rate (messages wait in the lane for a token):
 * a slow endpoint holds only its own messages, and the others keep flowing. Claims skip lanes with
 * more than half their cap in hand and take a channel's rows up to its cap; the leases of rows in
 * hand are renewed every third of a lease, so a message waiting in a lane is never sent by another
 * worker. Outcomes are written in batches, one statement for whatever finished while the previous
 * write ran; claims are one transaction too. The backlog is bounded per channel (oldest dropped) and
 * settled rows are deleted after `keepSettledMs`, so memory and the tables never grow without end.
 * Runs beside ingestion, never inside it.
 */
export function startOutboxSender(deps: OutboxSenderDeps): OutboxSender {
  const { store, client, options: o, logger } = deps
  const lanes = new Map<string, Lane>()
  /** Messages in hand (queued or in flight) per lane that make claims pass it over; claims top a lane up from half of it. */
  const laneCap = o.concurrencyPerChannel * 4
  const claimLimit = Math.max(laneCap * 4, 200)
  let stopped = false
  let pollTimer: NodeJS.Timeout | null = null
  let filling: Promise<void> | null = null
  let fillAgain = false
  /** The last claim found nothing due: lanes draining do not claim again until a wake or poll. */
  let exhausted = false
  const outcomes: SendOutcome[] = []
  const batchOutcomes: BatchOutcome[] = []
  /** Own rows claimed and not yet written back (queued, in flight, or their outcome unwritten): no claim returns them. */
  const inHand = new Set<number>()
  /** Batch rows claimed and not yet written back; those still sending have their progress here. */
  const batchesInHand = new Set<number>()
  const progress = new Map<number, BatchInHand>()
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
    const claimed = await store.claimDue(claimLimit, o.leaseMs, { perChannel: laneCap, skip, exclude: [...inHand], excludeBatches: [...batchesInHand] })
    exhausted = claimed.length === 0
    for (const m of claimed) {
      if (!m.batch) inHand.add(m.id)
      else if (!batchesInHand.has(m.id)) {
        batchesInHand.add(m.id)
        progress.set(m.id, { left: 0, httpStatus: null, unsent: [] })
      }
      if (m.batch) progress.get(m.id)!.left++
    }
    if (claimed.length === 0) return
    crashPoint('outbox.after-claim')
    const touched = new Set<Lane>()
    const unsent: ClaimedMessage[] = []
    for (const m of claimed) {
      if (stopped) unsent.push(m)
      else {
        const lane = laneOf(m.channel)
        lane.queue.push(m)
        touched.add(lane)
      }
    }
    for (const lane of touched) run(lane)
    if (unsent.length > 0) await giveBack(unsent)
  }

  /** Messages claimed but not tried (a stop): own rows due again now, batch messages as rows of their own. */
  async function giveBack(messages: ClaimedMessage[]) {
    const own: number[] = []
    for (const m of messages) {
      if (m.batch) record(m, { status: 'pending', attempts: m.attempts, retryAt: new Date(), httpStatus: null, error: null })
      else own.push(m.id)
    }
    if (own.length === 0) return
    try {
      await store.postpone(own, new Date())
    } finally {
      for (const id of own) inHand.delete(id)
    }
  }

  function laneOf(channel: string): Lane {
    let lane = lanes.get(channel)
    if (!lane) lanes.set(channel, (lane = { queue: [], active: 0, tokens: o.ratePerSecond, tokensAt: Date.now(), paced: null }))
    return lane
  }

  const laneLoad = (l: Lane) => l.queue.length + l.active

  /** Takes one of the lane's tokens (its rate, a second's worth at most in store), or says when one comes. */
  function takeToken(lane: Lane): number {
    const now = Date.now()
    lane.tokens = Math.min(o.ratePerSecond, lane.tokens + ((now - lane.tokensAt) / 1000) * o.ratePerSecond)
    lane.tokensAt = now
    if (lane.tokens < 1) return Math.ceil(((1 - lane.tokens) / o.ratePerSecond) * 1000)
    lane.tokens -= 1
    return 0
  }

  // ---- sending ----

  function run(lane: Lane) {
    while (!stopped && !lane.paced && lane.active < o.concurrencyPerChannel && lane.queue.length > 0) {
      const wait = takeToken(lane)
      if (wait > 0) {
        // Over the channel's rate: the lane goes on when the next token comes.
        lane.paced = setTimeout(() => {
          lane.paced = null
          run(lane)
        }, wait)
        break
      }
      const m = lane.queue.shift()!
      lane.active++
      void sendOne(m).then((outcome) => {
        lane.active--
        record(m, outcome)
        run(lane)
        // Topped up from half: the next claim arrives before the lane runs dry.
        if (laneLoad(lane) === Math.floor(laneCap / 2) && !exhausted) fill()
        settleIdle()
      })
    }
  }

  async function sendOne(m: ClaimedMessage): Promise<TryOutcome> {
    let status: number | null = null
    let error: string
    let retryable: boolean
    try {
      status = (await client.post(m.url, m.body, { ...m.headers, 'idempotency-key': m.idempotencyKey })).status
      if (status >= 200 && status < 300) {
        crashPoint('outbox.after-send')
        return { status: 'sent', httpStatus: status }
      }
      error = `answered ${status}`
      retryable = status >= 500 || status === 408 || status === 429
    } catch (err) {
      error = err instanceof Error ? err.message : String(err)
      retryable = !isPermanent(err)
    }
    const tries = m.attempts + 1
    if (!retryable || tries >= o.maxAttempts) {
      logger.warn({ channel: m.channel, key: m.idempotencyKey, status, error, tries }, 'outbox: message dead-lettered')
      return { status: 'failed', attempts: tries, retryAt: new Date(), httpStatus: status, error }
    }
    logger.debug({ channel: m.channel, key: m.idempotencyKey, status, error, tries }, 'outbox: delivery failed; trying again')
    const pause = Math.min(o.retryMaxMs, o.retryMinMs * 2 ** m.attempts)
    return { status: 'pending', attempts: tries, retryAt: new Date(Date.now() + pause), httpStatus: status, error }
  }

  // ---- recording outcomes, batched ----

  function record(m: ClaimedMessage, outcome: TryOutcome) {
    const tried = outcome.status === 'sent' || outcome.attempts > m.attempts
    if (tried) deps.onOutcome?.(m.channel, outcome.status === 'sent' ? 'sent' : outcome.status === 'failed' ? 'failed' : 'retried', 1)
    if (!m.batch) {
      if (!tried) return
      outcomes.push(
        outcome.status === 'sent'
          ? { id: m.id, status: 'sent', httpStatus: outcome.httpStatus }
          : outcome.status === 'failed'
            ? { id: m.id, status: 'failed', httpStatus: outcome.httpStatus, error: outcome.error! }
            : { id: m.id, status: 'retry', retryAt: outcome.retryAt, httpStatus: outcome.httpStatus, error: outcome.error! },
      )
    } else {
      const batch = progress.get(m.id)!
      if (outcome.status === 'sent') batch.httpStatus = outcome.httpStatus
      else batch.unsent.push({ message: m, ...outcome })
      if (--batch.left > 0) return
      progress.delete(m.id)
      batchOutcomes.push({ id: m.id, httpStatus: batch.httpStatus, unsent: batch.unsent })
    }
    flush()
  }

  /**
   * Outcomes are written together a moment after the first one: a query on the embedded store
   * blocks the event loop, so writing as each answer arrives would mean one statement per message.
   */
  function flush() {
    if (flushing || flushTimer || (outcomes.length === 0 && batchOutcomes.length === 0)) return
    flushTimer = setTimeout(() => {
      flushTimer = null
      const own = outcomes.splice(0)
      const batches = batchOutcomes.splice(0)
      flushing = store
        .settle(own, batches)
        .catch((err) => {
          // Not recorded: the leases run out and the rows are sent again (at least once).
          logger.warn({ err, messages: own.length, batches: batches.length }, 'outbox: recording send outcomes failed')
        })
        .finally(() => {
          for (const outcome of own) inHand.delete(outcome.id)
          for (const batch of batches) batchesInHand.delete(batch.id)
          flushing = null
          flush()
          settleIdle()
        })
    }, SETTLE_DELAY_MS)
  }

  // ---- leases, polling, backlog, stop ----

  /** The rows in hand keep their leases while they wait in a lane or are sent. */
  const leaseTimer = setInterval(() => {
    if (inHand.size === 0 && batchesInHand.size === 0) return
    store.extendLeases([...inHand], [...batchesInHand], o.leaseMs).catch((err) => logger.warn({ err }, 'outbox: renewing leases failed'))
  }, Math.max(1, Math.floor(o.leaseMs / 3)))
  leaseTimer.unref()

  let backlogCheckedAt = 0
  let trimmedAt = 0

  async function poll() {
    pollTimer = null
    // Counting the backlog reads every pending row: every few polls is often enough.
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

  /** Deletes settled rows past their keep, a step at a time (several senders may do it at once). */
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
    if (filling || flushing || flushTimer || outcomes.length > 0 || batchOutcomes.length > 0) return
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
      clearInterval(leaseTimer)
      // Claimed but not started: given back now, so another sender (or the next start) takes them at once.
      const unsent = [...lanes.values()].flatMap((l) => {
        if (l.paced) clearTimeout(l.paced)
        l.paced = null
        return l.queue.splice(0)
      })
      const given = giveBack(unsent).catch((err) => logger.warn({ err }, 'outbox: releasing unsent messages failed'))
      await new Promise<void>((resolve) => {
        idle.add(resolve)
        settleIdle()
      })
      await given
    },
  }
}

/** Errors a later try cannot cure: a refused address, a request the client will not make. */
function isPermanent(err: unknown): boolean {
  return err instanceof WebhookRefusedError || err instanceof TypeError || (err as { code?: string }).code === 'UND_ERR_INVALID_ARG'
}
