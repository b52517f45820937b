import type { Logger } from 'pino'
import type { SessionCompactionStore } from './session-compaction-store.ts'
import { startPeriodicPass } from '../../shared/periodic-pass.ts'

export interface SessionCompactionStats {
  /** When the last pass ended (null: none yet). */
  lastRunAt: Date | null
  /** Sessions merged and partial rows removed since start. */
  mergedSessions: number
  removedPartials: number
  /** Partial rows of the aggregate after the last step (null: no step yet). */
  partials: number | null
}

export interface SessionCompactionJob {
  stats(): SessionCompactionStats
  stop(): Promise<void>
}

/**
 * Keeps the sessions aggregate's partials near one per session: every `checkMs` a pass runs the
 * store's compaction in steps of at most `stepLimit` sessions, with a pause between steps, until no
 * session has more than one partial. Each step is one short transaction beside ingestion (which keeps
 * appending partials and never waits for it); a failed pass is tried again at the next check.
 */
export function startSessionCompactionJob(deps: {
  store: SessionCompactionStore
  logger: Pick<Logger, 'debug' | 'warn'>
  checkMs: number
  stepLimit?: number
  pauseMs?: number
}): SessionCompactionJob {
  const stepLimit = deps.stepLimit ?? 20_000
  const pauseMs = deps.pauseMs ?? 50
  const stats: SessionCompactionStats = { lastRunAt: null, mergedSessions: 0, removedPartials: 0, partials: null }

  async function pass(job: { readonly stopped: boolean }) {
    let merged = 0
    for (;;) {
      const step = await deps.store.compactStep(stepLimit)
      merged += step.sessions
      stats.mergedSessions += step.sessions
      stats.removedPartials += step.removedPartials
      stats.partials = step.partials
      if (!step.more || job.stopped) break
      await new Promise((r) => setTimeout(r, pauseMs))
    }
    stats.lastRunAt = new Date()
    if (merged > 0) deps.logger.debug({ sessions: merged, partials: stats.partials }, 'sessions aggregate: partials merged')
  }

  const job = startPeriodicPass({
    pass,
    everyMs: deps.checkMs,
    firstDelayMs: deps.checkMs,
    onError: (err) => deps.logger.warn({ err }, 'sessions aggregate: a compaction pass failed; it is tried again at the next check'),
  })
  return { stats: () => ({ ...stats }), stop: () => job.stop() }
}
