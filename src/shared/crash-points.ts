/**
 * Test-only crash points for the kill -9 matrix (test/e2e/kill-matrix.e2e.test.ts).
 *
 * `crashPoint('queue.flush.after-write')` does nothing unless a point was armed at start-up
 * (`TALLY_CRASH_AT=<point>[:<nth>]`, read by load-config and installed by `tally serve`); then the
 * nth time the named point is reached the process sends itself SIGKILL: no handler, no flush, no
 * `finally`, exactly what a power cut of the process looks like to the files it leaves behind.
 * Unarmed, a call is one boolean test.
 */

let armed = false
let target = ''
let remaining = 0
let unsafeAckBeforeWrite = false
let installed: { point: CrashPointName; nth: number } | null = null

/** Every point the code calls, so a test (and config validation) can tell a typo from a point. */
export const CRASH_POINTS = [
  // HTTP accept (capture)
  'capture.body-received',
  'capture.after-publish',
  // capture decode thread: the process dies mid-decode; `-exit`: only the thread ends (the process lives)
  'capture.decode-thread',
  'capture.decode-thread-exit',
  // queue flush (producer side, group commit)
  'queue.flush.before-write',
  'queue.flush.after-write',
  'queue.flush.after-datasync',
  'queue.flush.after-resolve',
  'queue.rotate.before-open',
  'queue.rotate.after-open',
  // worker (consumer side) and pipeline
  'worker.batch-received',
  'pipeline.after-decode',
  // the persons step merging stored persons: overrides (DuckDB) written, persons (metadata) not yet / also
  'persons.merge.after-overrides',
  'persons.merge.after-apply',
  'pipeline.before-store',
  'pipeline.after-store',
  'worker.before-ack',
  'queue.ack.before-write',
  'queue.ack.after-write',
  'queue.segment.before-delete',
  'queue.segment.after-delete',
  'worker.after-ack',
  // restart / recovery (armed on a restart: see the matrix's restart scenarios)
  'recover.before-truncate',
  'recover.after-truncate',
  'recover.done',
  // outgoing webhooks: messages in the outbox, batch not acked; claimed (leased), not sent; sent (2xx), not marked sent
  'notify.after-enqueue',
  'outbox.after-claim',
  'outbox.after-send',
  // session replay: the block appended but not fsync'd; the block durable, its summary not yet queued
  'replay.block-written',
  'replay.before-publish',
] as const

export type CrashPointName = (typeof CRASH_POINTS)[number]

/** Parses `<point>[:<nth>]`; null when malformed or the point does not exist. */
export function parseCrashAt(raw: string): { point: CrashPointName; nth: number } | null {
  const m = /^([a-z0-9.-]+)(?::(\d+))?$/.exec(raw)
  if (!m || !(CRASH_POINTS as readonly string[]).includes(m[1]!)) return null
  const nth = m[2] === undefined ? 1 : Number(m[2])
  if (!Number.isSafeInteger(nth) || nth < 1) return null
  return { point: m[1] as CrashPointName, nth }
}

/** Arms one point (called once at start-up by `tally serve` from the config); null disarms. */
export function installCrashPoints(opts: { crashAt: { point: CrashPointName; nth: number } | null; unsafeAckBeforeWrite?: boolean }): void {
  installed = opts.crashAt
  armed = opts.crashAt !== null
  target = opts.crashAt?.point ?? ''
  remaining = opts.crashAt?.nth ?? 0
  unsafeAckBeforeWrite = opts.unsafeAckBeforeWrite === true
}

/** The point armed at start-up, as given (worker threads arm their own copy of this module with it). */
export function installedCrashPoint(): { point: CrashPointName; nth: number } | null {
  return installed
}

/** SIGKILLs this process the nth time `name` is reached, if that point is armed. */
export function crashPoint(name: CrashPointName): void {
  if (!armed) return
  if (name !== target || --remaining > 0) return
  process.kill(process.pid, 'SIGKILL')
}

/**
 * The deliberately broken variant the kill matrix must catch (`TALLY_UNSAFE_ACK_BEFORE_FSYNC`):
 * the queue answers publishers before their write and fdatasync. Never set outside that test.
 */
export function unsafeAckBeforeFsync(): boolean {
  return unsafeAckBeforeWrite
}
