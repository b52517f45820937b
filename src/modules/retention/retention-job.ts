import type { Logger } from 'pino'
import type { EventRetentionStore } from './event-retention-store.ts'
import { startPeriodicPass } from '../../shared/periodic-pass.ts'

export interface RetentionProject {
  id: number
  /** Days of events kept; null keeps them forever. */
  eventRetentionDays: number | null
}

export interface RetentionStats {
  /** When the last pass over the projects finished (null: none yet). */
  lastRunAt: Date | null
  /** Events and dead letters removed since start. */
  deletedEvents: number
  deletedDeadLetters: number
  /** Person overrides no longer needed (their old person has no stored event left), removed since start. */
  deletedPersonOverrides: number
  /** Events removed by the last pass. */
  lastDeletedEvents: number
}

export interface RetentionJob {
  stats(): RetentionStats
  stop(): Promise<void>
}

const DAY = 86_400_000

/**
 * Deletes events past each project's `event_retention_days`. It looks at the settings every
 * `checkMs` (a minute by default, so a changed setting acts within a minute) and runs a project again
 * when its setting changed or `everyMs` (an hour) has passed. The store deletes in bounded steps with
 * a pause between them, so ingestion and queries never wait long behind it.
 */
export function startRetentionJob(deps: {
  projects: () => Promise<RetentionProject[]>
  store: EventRetentionStore
  logger: Pick<Logger, 'info' | 'warn'>
  checkMs?: number
  everyMs?: number
  stepLimit?: number
  pauseMs?: number
  now?: () => number
}): RetentionJob {
  const checkMs = deps.checkMs ?? 60_000
  const everyMs = deps.everyMs ?? 3_600_000
  const stepLimit = deps.stepLimit ?? 50_000
  const pauseMs = deps.pauseMs ?? 50
  const now = deps.now ?? Date.now
  const done = new Map<number, { at: number; days: number }>()
  const stats: RetentionStats = { lastRunAt: null, deletedEvents: 0, deletedDeadLetters: 0, deletedPersonOverrides: 0, lastDeletedEvents: 0 }

  async function pass(job: { readonly stopped: boolean }) {
    let removed = 0
    let ran = false
    for (const p of await deps.projects()) {
      if (job.stopped) return
      if (p.eventRetentionDays === null) {
        done.delete(p.id)
        continue
      }
      const last = done.get(p.id)
      if (last && last.days === p.eventRetentionDays && now() - last.at < everyMs) continue
      ran = true
      const before = new Date(now() - p.eventRetentionDays * DAY)
      for (;;) {
        const step = await deps.store.deleteBefore(p.id, before, stepLimit)
        removed += step.events
        stats.deletedEvents += step.events
        stats.deletedDeadLetters += step.deadLetters
        stats.deletedPersonOverrides += step.personOverrides
        if (!step.more || job.stopped) break
        await new Promise((r) => setTimeout(r, pauseMs))
      }
      done.set(p.id, { at: now(), days: p.eventRetentionDays })
    }
    if (ran) {
      stats.lastRunAt = new Date(now())
      stats.lastDeletedEvents = removed
      if (removed > 0) deps.logger.info({ events: removed }, 'retention: old events deleted')
    }
  }

  const job = startPeriodicPass({
    pass,
    everyMs: checkMs,
    firstDelayMs: 0,
    onError: (err) => deps.logger.warn({ err }, 'retention: a pass failed; it is tried again at the next check'),
  })
  return { stats: () => ({ ...stats }), stop: () => job.stop() }
}
