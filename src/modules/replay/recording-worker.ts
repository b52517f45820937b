import type { Logger } from 'pino'
import type { EventQueue } from '../../queue/event-queue.ts'
import { decodeBlock, type RecordingBlock } from './recording-block.ts'
import type { RecordingStore } from './recording-store.ts'

/**
 * The replay metadata worker: takes block summaries off the recording queue in micro-batches and
 * writes them with one set-based statement pair per batch (block rows, then the affected session
 * rows recomputed). A failed batch is delivered again (the writes are idempotent); a line that is
 * not a block is a bug, logged and skipped.
 */
export function startRecordingWorker(deps: { queue: EventQueue; store: RecordingStore; logger: Logger; maxBatch?: number; maxWaitMs?: number }): void {
  deps.queue.consume(
    async function recordingMetadataBatch(lines) {
      const blocks: RecordingBlock[] = []
      for (const line of lines) {
        try {
          blocks.push(decodeBlock(line))
        } catch (err) {
          deps.logger.error({ err }, 'recording queue line is not a block; skipped')
        }
      }
      await deps.store.insertBlocks(blocks)
    },
    // A long linger: the metadata may trail the snapshots by a second, and every batch costs two
    // statements whatever its size (measured: with 50 ms the metadata store was most of /s/'s CPU).
    { maxBatch: deps.maxBatch ?? 5000, maxWaitMs: deps.maxWaitMs ?? 1000, retryDelayMs: 100, retryMaxDelayMs: 10_000 },
  )
}
