import type { Logger } from 'pino'
import type { QueueWriteState } from '../queue/event-queue.ts'

/** What can hold ingestion up: the queue cannot take writes, or the worker cannot store. */
export type IngestionComponent = 'queue' | 'event_store'

/** One blocked component: why, since when, and how many attempts have failed since. */
export interface BlockedComponent {
  readonly reason: string
  readonly since: string
  readonly failures: number
}

/**
 * Ingestion's state as a plain object (what `/_ready` serves and a metrics exporter can read):
 * `blocked` while any component is; `reason` and `since` are those of the earliest blocked one.
 */
export interface IngestionHealth {
  readonly blocked: boolean
  readonly reason: string | null
  readonly since: string | null
  readonly components: Readonly<Partial<Record<IngestionComponent, BlockedComponent>>>
}

export interface IngestionHealthTracker {
  /** A fresh snapshot (a plain, JSON-ready object). */
  state(): IngestionHealth
  /** Records a failed attempt; logs once when the component goes from working to blocked. */
  blocked(component: IngestionComponent, reason: string, err?: unknown): void
  /** Records a success; logs once when a blocked component works again. */
  recovered(component: IngestionComponent): void
}

/**
 * Tracks which parts of ingestion are blocked. Logs one line per change of state (error when a
 * component blocks: a human may have to free space or fix the store; warn when it recovers, with
 * how long and how many failed attempts), never one per attempt.
 */
export function createIngestionHealth(opts: { logger?: Pick<Logger, 'error' | 'warn'>; now?: () => Date } = {}): IngestionHealthTracker {
  const now = opts.now ?? (() => new Date())
  const blocked = new Map<IngestionComponent, { reason: string; since: Date; failures: number }>()
  return {
    state() {
      const components: Partial<Record<IngestionComponent, BlockedComponent>> = {}
      let first: { reason: string; since: Date } | null = null
      for (const [name, b] of blocked) {
        components[name] = { reason: b.reason, since: b.since.toISOString(), failures: b.failures }
        if (!first || b.since < first.since) first = b
      }
      return {
        blocked: first !== null,
        reason: first ? first.reason : null,
        since: first ? first.since.toISOString() : null,
        components,
      }
    },
    blocked(component, reason, err) {
      const b = blocked.get(component)
      if (b) {
        b.failures++
        b.reason = reason
        return
      }
      blocked.set(component, { reason, since: now(), failures: 1 })
      opts.logger?.error({ component, reason, err }, `ingestion blocked: ${component} failing, retrying with backoff`)
    },
    recovered(component) {
      const b = blocked.get(component)
      if (!b) return
      blocked.delete(component)
      const blockedMs = now().getTime() - b.since.getTime()
      opts.logger?.warn({ component, blockedMs, failures: b.failures, reason: b.reason }, `ingestion recovered: ${component} working again`)
    },
  }
}

/**
 * The tracker's state with the queue's write state folded in as the `queue` component (the queue
 * logs its own changes of state; see file-event-queue.ts).
 */
export function withQueueState(health: IngestionHealth, queue: QueueWriteState): IngestionHealth {
  if (queue.writable) return health
  const since = queue.since ?? new Date().toISOString()
  const components = { ...health.components, queue: { reason: queue.reason ?? 'queue cannot write', since, failures: 1 } }
  const earliest = !health.blocked || since < health.since! ? { reason: components.queue.reason, since } : { reason: health.reason, since: health.since }
  return { blocked: true, ...earliest, components }
}
