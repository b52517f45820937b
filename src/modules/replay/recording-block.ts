import type { SnapshotSummary } from '../../domain/replay/summarise-snapshots.ts'
import type { BlockLocation } from './recording-blob-store.ts'

/**
 * One stored block of a recording and what the metadata row needs from it: what `/s/` puts on the
 * recording queue (one JSON line) once the block's bytes are durable, and what the worker writes.
 */
export interface RecordingBlock extends BlockLocation, Omit<SnapshotSummary, 'firstUrlMs'> {
  distinctId: string
  windowIds: string[]
  firstUrlMs: number | null
  /**
   * sha256 (base64url) of the block's uncompressed lines: a batch the SDK sends again has the same
   * digest, and the worker keeps one block per digest and session. Absent on lines queued by older builds.
   */
  digest?: string
}

export function encodeBlock(b: RecordingBlock): string {
  return JSON.stringify(b)
}

/** The block of a queue line; throws on a line that is not one (a bug: the queue holds only these). */
export function decodeBlock(line: string): RecordingBlock {
  const b = JSON.parse(line) as RecordingBlock
  if (typeof b.projectId !== 'number' || typeof b.sessionId !== 'string' || typeof b.offset !== 'number') {
    throw new Error('not a recording block')
  }
  return b
}
