import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import { AppError, type ErrorCode } from '../../shared/errors.ts'
import { installedCrashPoint } from '../../shared/crash-points.ts'
import type { CaptureTransformInput, CaptureTransformOutput } from './capture-transform.ts'

export interface DecodePoolOptions {
  threads: number
  /** `Retry-After` of the 503 answered for a request whose thread died (default 5). */
  retryAfterSeconds?: number
  logger?: Pick<Logger, 'warn' | 'error'>
  /**
   * The threads start with the first request and end after this long without one (default 60 s):
   * an idle Tally does not keep their heaps (~50 MB of RSS for one thread).
   */
  idleMs?: number
}

interface Pending {
  resolve(out: CaptureTransformOutput): void
  reject(err: unknown): void
}

interface Slot {
  worker: Worker
  pending: Map<number, Pending>
  /** False once the thread has died (until its replacement is spawned). */
  alive: boolean
  /** True once the thread has answered a request: it loads and runs. */
  answered: boolean
}

type Reply = { id: number; ok: CaptureTransformOutput } | { id: number; error: { app: boolean; code?: ErrorCode; message: string; attr?: string | null; extra?: Record<string, unknown> } }

// The thread's own module: .js once built; under tsx (tests, benchmarks) the .ts file, loaded through
// a bootstrap that registers tsx in the thread first (a worker does not inherit the parent's loader).
const RUNNING_TS = import.meta.url.endsWith('.ts')
const THREAD_URL = new URL(RUNNING_TS ? './decode-thread.ts' : './decode-thread.js', import.meta.url)
const THREAD_ENTRY: URL = RUNNING_TS
  ? new URL(`data:text/javascript,${encodeURIComponent(
    `const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}); register(); await import(${JSON.stringify(THREAD_URL.href)})`,
  )}`)
  : THREAD_URL

/**
 * Worker threads that decode, normalise and encode large capture bodies off the event loop (the
 * main thread keeps HTTP, the project look-up and the queue's group commit), so capture uses both
 * cores. Each request goes to the thread with the fewest in flight. A thread that dies (crash,
 * out of memory) fails only its in-flight requests, with 503 `service_unavailable` + Retry-After:
 * nothing of them was published, so no 200 was sent and the SDK sends them again; a new thread
 * replaces it.
 */
export function createDecodePool(opts: DecodePoolOptions) {
  let nextId = 1
  let closed = false
  const slots: Slot[] = []

  /** Deaths in a row of a slot's threads that never answered (a thread that cannot start). */
  const startFailures: number[] = []
  const spawn = (index: number) => {
    const worker = new Worker(THREAD_ENTRY, {
      // Profiling and loader flags carry over; the test runner's own flags must not.
      execArgv: process.execArgv.filter((a) => !a.startsWith('--test')),
      workerData: { crashAt: installedCrashPoint() },
    })
    const slot: Slot = { worker, pending: new Map(), alive: true, answered: false }
    worker.unref()
    worker.on('message', (msg: Reply) => {
      if (!slot.answered) {
        slot.answered = true
        startFailures[index] = 0
      }
      const p = slot.pending.get(msg.id)
      if (!p) return
      slot.pending.delete(msg.id)
      if ('ok' in msg) return p.resolve(msg.ok)
      const e = msg.error
      p.reject(e.app ? new AppError(e.code!, e.message, e.attr ?? null, e.extra) : new Error(`capture decode thread: ${e.message}`))
    })
    const fail = (why: unknown) => {
      if (!slot.alive) return
      slot.alive = false
      const n = slot.pending.size
      for (const p of slot.pending.values()) p.reject(unavailable(why))
      slot.pending.clear()
      if (closed) return
      // A thread that dies before answering anything may not be able to start at all: back off
      // (0.25 s doubling up to 30 s) instead of respawning in a tight loop.
      const failures = slot.answered ? 0 : (startFailures[index] ?? 0) + 1
      startFailures[index] = failures
      const delayMs = failures === 0 ? 0 : Math.min(30_000, 250 * 2 ** (failures - 1))
      opts.logger?.error({ err: why, inFlight: n, respawnInMs: delayMs }, 'capture decode thread died; its requests were answered 503 and a new thread starts')
      if (delayMs === 0) spawn(index)
      else setTimeout(() => !closed && slots[index] === slot && spawn(index), delayMs).unref()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`decode thread exited with code ${code}`)))
    slots[index] = slot
  }
  const unavailable = (cause?: unknown) =>
    new AppError('service_unavailable', 'Events could not be decoded right now; retry later.', null, {
      retryAfterSeconds: opts.retryAfterSeconds ?? 5,
      ...(cause !== undefined && { cause }),
    })
  const idleMs = opts.idleMs ?? 60_000
  let lastRun = 0
  const reaper = setInterval(() => {
    if (slots.length === 0 || Date.now() - lastRun < idleMs || slots.some((s) => s.pending.size > 0)) return
    for (const s of slots.splice(0)) {
      s.alive = false // not a death: no respawn
      void endThread(s.worker)
    }
  }, Math.min(idleMs, 10_000))
  reaper.unref()

  return {
    run(input: CaptureTransformInput): Promise<CaptureTransformOutput> {
      if (closed) return Promise.reject(new AppError('service_unavailable', 'Shutting down; retry later.', null, { retryAfterSeconds: opts.retryAfterSeconds ?? 5 }))
      lastRun = Date.now()
      if (slots.length === 0) for (let i = 0; i < opts.threads; i++) spawn(i)
      let slot: Slot | null = null
      for (const s of slots) if (s.alive && (slot === null || s.pending.size < slot.pending.size)) slot = s
      if (slot === null) return Promise.reject(unavailable())
      const chosen = slot
      const id = nextId++
      return new Promise((resolve, reject) => {
        chosen.pending.set(id, { resolve, reject })
        // Keep the process alive while a thread works for it; idle threads do not hold it open.
        if (chosen.pending.size === 1) chosen.worker.ref()
        chosen.worker.postMessage({ id, input })
      }).finally(() => {
        if (chosen.pending.size === 0) chosen.worker.unref()
      }) as Promise<CaptureTransformOutput>
    },
    /** Threads running now (0 before the first request and after `idleMs` without one). */
    liveThreads(): number {
      return slots.filter((s) => s.alive).length
    },
    async close(): Promise<void> {
      closed = true
      clearInterval(reaper)
      await Promise.all(slots.map((s) => endThread(s.worker)))
    },
  }
}

export type DecodePool = ReturnType<typeof createDecodePool>

/** How long a thread asked to end may take before it is terminated. */
const END_GRACE_MS = 1000

/**
 * Ends an idle thread by asking it to close its port, so that it exits as a thread normally does
 * (`--cpu-prof` writes its profile then; `terminate()` would lose it); terminated if it has not
 * ended within END_GRACE_MS.
 */
async function endThread(worker: Worker): Promise<void> {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  worker.postMessage({ end: true })
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), END_GRACE_MS)))
  if ((await Promise.race([exited, late])) === 'late') await worker.terminate()
  clearTimeout(timer)
}
