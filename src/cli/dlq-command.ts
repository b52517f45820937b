import type { Config } from '../config/load-config.ts'
import { createAdapters } from '../app/create-adapters.ts'
import { replayDeadLetters } from '../ingestion/replay-dead-letters.ts'

export interface DlqOptions {
  ids: number[]
  projectId?: number
  pendingOnly: boolean
}

/**
 * `tally dlq list` and `tally dlq replay`: the events the pipeline could not process, and putting
 * them back on the queue (the server processes them at its next start). Opens the data dir directly:
 * stop the server first (the embedded stores take one process at a time).
 */
export async function dlqCommand(config: Config, args: string[], opts: DlqOptions): Promise<number> {
  const [sub] = args
  if (sub !== 'list' && sub !== 'replay') {
    console.error('Usage: tally dlq list [--project N] [--pending] | tally dlq replay [--id N ...] [--project N]')
    return 2
  }
  const stores = await createAdapters(config)
  try {
    if (sub === 'replay') {
      const { replayed } = await replayDeadLetters(stores, { projectId: opts.projectId, ids: opts.ids.length ? opts.ids : undefined })
      console.log(`${replayed} dead letter(s) put back on the queue; they are processed when the server runs`)
      return 0
    }
    const { count, rows } = await stores.deadLetters.list({ projectId: opts.projectId, pendingOnly: opts.pendingOnly, limit: 10_000, offset: 0 })
    for (const l of rows) {
      const state = l.replayedAt ? `replayed ${l.replayedAt.toISOString()}` : 'pending'
      console.log(`${l.id}\t${l.failedAt.toISOString()}\tproject ${l.projectId ?? '-'}\t${l.uuid ?? '-'}\t${l.step}: ${l.reason}\t${state}`)
    }
    console.log(`${count} dead letter(s)${count > rows.length ? `, the newest ${rows.length} shown` : ''}`)
    return 0
  } finally {
    await stores.close()
  }
}
