import { parentPort, workerData } from 'node:worker_threads'
import { AppError } from '../../shared/errors.ts'
import { crashPoint, installCrashPoints, type CrashPointName } from '../../shared/crash-points.ts'
import { pooledRandomBytes, transformCaptureRequest, type CaptureTransformInput } from './capture-transform.ts'

/**
 * A capture decode thread (see decode-pool.ts): answers each `{ id, input }` with
 * `{ id, ok: output }` or `{ id, error }`. Holds no state but its random pool: a thread that dies
 * loses only the requests it was decoding, which have not been published (no 200 was sent).
 */

// The kill -9 matrix's point, armed on the main thread at start-up and handed over by the pool.
const armed = (workerData as { crashAt?: { point: CrashPointName; nth: number } | null } | null)?.crashAt ?? null
installCrashPoints({ crashAt: armed?.point === 'capture.decode-thread' ? armed : null })
/** `capture.decode-thread-exit[:n]`: this thread alone ends on its nth request (the process lives on). */
let exitCountdown = armed?.point === 'capture.decode-thread-exit' ? armed.nth : 0

const randomBytes = pooledRandomBytes()

parentPort!.on('message', (msg: { id: number; input: CaptureTransformInput } | { end: true }) => {
  // Asked to end (idle, or the pool closes): with the port closed the thread exits normally.
  if ('end' in msg) return parentPort!.close()
  if (exitCountdown > 0 && --exitCountdown === 0) process.exit(1)
  crashPoint('capture.decode-thread')
  try {
    // A Buffer arrives as a plain Uint8Array: view it as a Buffer again (no copy).
    const body = msg.input.body.body as Uint8Array | null | undefined
    const input = body && !Buffer.isBuffer(body) ? { ...msg.input, body: { ...msg.input.body, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) } } : msg.input
    parentPort!.postMessage({ id: msg.id, ok: transformCaptureRequest(input, randomBytes) })
  } catch (err) {
    const error = err instanceof AppError
      ? { app: true, code: err.code, message: err.message, attr: err.attr, extra: err.extra }
      : { app: false, message: err instanceof Error ? err.message : String(err) }
    parentPort!.postMessage({ id: msg.id, error })
  }
})
