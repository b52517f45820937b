import { randomUUID } from 'node:crypto'
import { connect, NoRespondersError, RequestError, TimeoutError, type NatsConnection } from '@nats-io/transport-node'
import { AckPolicy, DiscardPolicy, JetStreamApiError, jetstreamManager, RetentionPolicy, StorageType, type Consumer, type JetStreamManager } from '@nats-io/jetstream'
import { MessageTooLargeError, QueueFullError, type EventQueue, type QueueBacklog, type QueueWriteState } from './event-queue.ts'
import { NatsConsumer } from './nats-consumer.ts'
import type { QueueLogger } from './segment-writer.ts'

export interface NatsEventQueueOptions {
  /** NATS server URLs (one, or the members of a cluster). */
  servers: string[]
  /** The JetStream stream (created when missing); its subject is `<stream>.events`. */
  stream: string
  /** The durable pull consumer every worker process shares. */
  consumer?: string
  /** Stream replicas (1 on a single server; 3 on a three-node cluster). */
  replicas?: number
  /** The stream's byte limit (it keeps only unacknowledged messages): past it publishes are refused (503). */
  maxBacklogBytes?: number
  /** Publishes carrying the same message id within this window are stored once. */
  duplicateWindowMs?: number
  /** A message not acknowledged (nor marked in progress) within this is delivered again; it doubles on each redelivery, up to 16x. */
  ackWaitMs?: number
  /** A publish not acknowledged by JetStream within this fails (capture answers 503). */
  publishTimeoutMs?: number
  /** The connection's name, as the server lists it. */
  name?: string
  /**
   * How long opening waits for a JetStream that is reachable but not ready (a cluster electing its
   * leaders, a stream being created by another process) before it gives up. Default 60 s.
   */
  openTimeoutMs?: number
  logger?: QueueLogger
}

/** JetStream's error codes for a publish refused by the stream's limits. */
const STREAM_FULL_CODES = new Set([10077, 10078, 10047])
/** The timeout of stream and consumer management requests (at least the publish timeout). */
const ADMIN_TIMEOUT_MS = 10_000
/**
 * JetStream's answers that mean "not yet" while a cluster forms or another process creates the
 * same stream: the cluster has no meta leader (10008), or a stream or consumer was created by
 * another process in the meantime (10058, 10148). A real refusal (such as 10023, not enough
 * servers for the replicas) is not retried.
 */
const NOT_READY_CODES = new Set([10008, 10058, 10148])

function isNotReadyYet(err: unknown): boolean {
  if (err instanceof TimeoutError || err instanceof NoRespondersError || err instanceof RequestError) return true
  return err instanceof JetStreamApiError && NOT_READY_CODES.has(err.code)
}

/** Room left in a message for its headers and protocol framing. */
const PAYLOAD_SLACK = 1024

/**
 * The EventQueue on NATS JetStream: one message per publish (a capture request or a group of
 * them), its events separated by '\n', carrying a unique `Nats-Msg-Id` so that the stream's
 * duplicate window stores a retried publish once. The stream is a work queue with file storage:
 * it keeps what no worker has acknowledged yet, and refuses publishes past `maxBacklogBytes`.
 * `publish` resolves only after JetStream's publish acknowledgement (stored on the stream's
 * replicas). Workers in any number of processes share one durable pull consumer (`nats-consumer.ts`).
 */
export async function openNatsEventQueue(opts: NatsEventQueueOptions): Promise<EventQueue> {
  const subject = `${opts.stream}.events`
  const durable = opts.consumer ?? 'tally-worker'
  const ackWaitMs = opts.ackWaitMs ?? 30_000
  const publishTimeoutMs = opts.publishTimeoutMs ?? 5000
  const log = opts.logger
  const nc = await connect({
    servers: opts.servers,
    name: opts.name ?? 'tally',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 5000,
  }).catch((err: unknown) => {
    throw new Error(`NATS at ${opts.servers.join(',')} is unreachable: ${String(err instanceof Error ? err.message : err)}`)
  })
  let jsm: JetStreamManager
  let openSeq: number
  let pull: Consumer
  try {
    const deadline = performance.now() + (opts.openTimeoutMs ?? 60_000)
    for (let attempt = 1; ; attempt++) {
      try {
        // Stream and consumer management is slower than a publish on a replicated stream: its own timeout.
        jsm = await jetstreamManager(nc, { timeout: Math.max(publishTimeoutMs, ADMIN_TIMEOUT_MS) })
        openSeq = await ensureStream(jsm, opts, subject, durable, ackWaitMs)
        pull = await jsm.jetstream().consumers.get(opts.stream, durable)
        break
      } catch (err) {
        if (!isNotReadyYet(err) || performance.now() > deadline) throw err
        log?.warn({ err: String(err), attempt }, 'event queue: JetStream is not ready yet; retrying')
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)))
      }
    }
  } catch (err) {
    await nc.close()
    throw err
  }
  const js = jsm.jetstream()
  const maxPayload = Math.max(4096, (nc.info?.max_payload ?? 1024 * 1024) - PAYLOAD_SLACK)

  let connected = true
  let write: QueueWriteState = { writable: true, reason: null, since: null }
  let published = 0
  let flushes = 0
  let lastSeq = 0
  let closed = false
  let consumer: NatsConsumer | null = null
  let probe: NodeJS.Timeout | null = null
  let lag: QueueBacklog & { at: number } = { events: 0, bytes: 0, oldestAgeMs: 0, at: 0 }
  let lagRefresh: Promise<void> | null = null
  /** Events per message seen by this process (for the backlog's event count). */
  let eventsPerMessage = 1

  const unwritable = (reason: string) => {
    if (write.writable) {
      log?.warn({ reason }, 'event queue cannot take publishes: capture answers 503')
      write = { writable: false, reason, since: new Date().toISOString() }
    } else write = { ...write, reason }
    probe ??= setTimeout(runProbe, 250)
  }
  const writable = () => {
    if (!write.writable) log?.warn({ since: write.since }, 'event queue takes publishes again')
    write = { writable: true, reason: null, since: null }
  }
  const runProbe = async () => {
    probe = null
    if (closed || write.writable) return
    try {
      if (!connected) throw new Error(write.reason ?? 'NATS unreachable')
      const info = await jsm.streams.info(opts.stream)
      const limit = info.config.max_bytes
      if (limit > 0 && info.state.bytes >= limit * 0.9) throw new Error(`the JetStream stream ${opts.stream} is full: ${info.state.bytes} of ${limit} bytes unprocessed`)
      writable()
    } catch (err) {
      if (!closed) {
        write = { ...write, reason: err instanceof Error ? err.message : String(err) }
        probe = setTimeout(runProbe, 1000)
      }
    }
  }

  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        connected = false
        if (!closed) unwritable(`NATS connection lost (${opts.servers.join(',')}); reconnecting`)
      } else if (s.type === 'reconnect') {
        connected = true
        log?.warn({ server: s.server }, 'event queue: NATS connection back')
        if (!write.writable && !probe) probe = setTimeout(runProbe, 0)
      }
    }
  })()

  const publishOne = async (payload: string, events: number) => {
    const ack = await js.publish(subject, payload, { msgID: randomUUID(), timeout: publishTimeoutMs })
    lastSeq = Math.max(lastSeq, ack.seq)
    published += events
    flushes++
  }

  const refreshLag = async () => {
    const [ci, si] = await Promise.all([jsm.consumers.info(opts.stream, durable), jsm.streams.info(opts.stream)])
    let oldestAgeMs = 0
    if (si.state.messages > 0) {
      const first = await jsm.streams.getMessage(opts.stream, { seq: si.state.first_seq }).catch(() => null)
      if (first) oldestAgeMs = Math.max(0, Date.now() - first.time.getTime())
    }
    const messages = ci.num_pending + ci.num_ack_pending
    lag = { events: Math.round(messages * eventsPerMessage), bytes: si.state.bytes, oldestAgeMs, at: performance.now() }
  }

  return {
    async publish(messages) {
      if (closed) throw new Error('event queue is closed')
      if (messages.length === 0) return
      if (!connected) throw new Error(write.reason ?? 'NATS unreachable')
      const parts = splitPayloads(messages, maxPayload)
      try {
        await Promise.all(parts.map((p) => publishOne(p.payload, p.events)))
        eventsPerMessage = eventsPerMessage * 0.9 + (messages.length / parts.length) * 0.1
        if (!write.writable && connected) writable()
      } catch (err) {
        if (err instanceof JetStreamApiError && STREAM_FULL_CODES.has(err.code)) {
          const limit = opts.maxBacklogBytes ?? 0
          unwritable(`the JetStream stream ${opts.stream} is full (${err.message}): the workers have fallen behind`)
          throw new QueueFullError(limit, limit)
        }
        unwritable(`NATS did not acknowledge a publish: ${err instanceof Error ? err.message : String(err)}`)
        throw err
      }
    },
    consume(handler, o) {
      if (consumer) throw new Error('event queue already has a consumer')
      consumer = new NatsConsumer({ consumer: pull, openSeq, ackWaitMs, logger: log })
      consumer.start(handler, o)
    },
    async drain(timeoutMs) {
      const end = performance.now() + timeoutMs
      const done = consumer?.beginDrain()
      try {
        for (;;) {
          if (lastSeq === 0 && (consumer?.idle() ?? true)) return true
          if (consumer?.idle() ?? true) {
            const ci = await jsm.consumers.info(opts.stream, durable).catch(() => null)
            if (ci && ci.ack_floor.stream_seq >= lastSeq) return true
          }
          if (performance.now() >= end) return false
          await new Promise((r) => setTimeout(r, 20))
        }
      } finally {
        done?.()
      }
    },
    stats: () => ({ published, flushes, acked: consumer?.acked ?? 0, failedBatches: consumer?.failedBatches ?? 0 }),
    backlog() {
      // Consumer info is a round trip: served from the last answer, refreshed in the background.
      if (!closed && !lagRefresh && performance.now() - lag.at > 1000) {
        lagRefresh = refreshLag()
          .catch(() => undefined)
          .finally(() => (lagRefresh = null))
      }
      const { events, bytes, oldestAgeMs } = lag
      return { events, bytes, oldestAgeMs }
    },
    writeState: () => write,
    async close() {
      if (closed) return
      closed = true
      if (probe) clearTimeout(probe)
      await consumer?.stop()
      await lagRefresh
      // Flushes the acks and NAKs just sent; with the server away that could wait for its return, so bounded.
      let timer: NodeJS.Timeout | undefined
      await Promise.race([nc.drain().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, 2000)))])
      clearTimeout(timer)
      if (!nc.isClosed()) await nc.close()
    },
  }
}

/** Creates the stream and the durable consumer when missing; returns the stream's last sequence. */
async function ensureStream(jsm: JetStreamManager, opts: NatsEventQueueOptions, subject: string, durable: string, ackWaitMs: number): Promise<number> {
  const nanos = (ms: number) => ms * 1_000_000
  let info = await jsm.streams.info(opts.stream).catch((err: unknown) => {
    if (err instanceof JetStreamApiError && err.code === 10059) return null
    throw err
  })
  info ??= await jsm.streams.add({
    name: opts.stream,
    subjects: [subject],
    storage: StorageType.File,
    retention: RetentionPolicy.Workqueue,
    num_replicas: opts.replicas ?? 1,
    duplicate_window: nanos(opts.duplicateWindowMs ?? 120_000),
    max_bytes: opts.maxBacklogBytes ?? -1,
    discard: DiscardPolicy.New,
  })
  const existing = await jsm.consumers.info(opts.stream, durable).catch(() => null)
  if (!existing) {
    // Redelivery after a crash: the ack wait, doubling up to 16x; "max deliver" is required with a
    // backoff and is set out of reach (an event is never dropped for being delivered too often).
    const backoff = [1, 2, 4, 8, 16].map((k) => nanos(ackWaitMs * k))
    await jsm.consumers.add(opts.stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      backoff,
      max_deliver: 1_000_000_000,
      max_ack_pending: 100_000,
    })
  }
  return info.state.last_seq
}

/**
 * Joins events into messages of at most `max` bytes. An event larger than that cannot be queued:
 * `MessageTooLargeError` before anything is published, so a request is refused whole (413).
 */
function splitPayloads(messages: string[], max: number): { payload: string; events: number }[] {
  let chars = messages.length
  for (const m of messages) chars += m.length
  // A UTF-16 unit is at most 3 UTF-8 bytes: most publishes need no byte count.
  if (chars * 3 <= max) return [{ payload: messages.join('\n'), events: messages.length }]
  const out: { payload: string; events: number }[] = []
  let cur: string[] = []
  let size = 0
  for (const m of messages) {
    const bytes = Buffer.byteLength(m) + 1
    if (bytes > max) throw new MessageTooLargeError(bytes, max)
    if (size + bytes > max && cur.length > 0) {
      out.push({ payload: cur.join('\n'), events: cur.length })
      cur = []
      size = 0
    }
    cur.push(m)
    size += bytes
  }
  if (cur.length > 0) out.push({ payload: cur.join('\n'), events: cur.length })
  return out
}
