import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { test } from 'node:test'
import { AppError } from '../../shared/errors.ts'
import { installCrashPoints } from '../../shared/crash-points.ts'
import { createDecodePool } from './decode-pool.ts'
import { transformCaptureRequest, type CaptureTransformInput } from './capture-transform.ts'

const NOW = Date.UTC(2026, 10, 23, 12)

function input(body: Buffer, contentEncoding: string | null = null): CaptureTransformInput {
  return {
    body: { body, contentType: 'application/json', contentEncoding, query: {}, method: 'POST', maxBytes: 10_000_000 },
    isEngage: false,
    bearer: null,
    ip: '10.0.0.1',
    nowMs: NOW,
  }
}

function batchBody(n: number): Buffer {
  const batch = Array.from({ length: n }, (_, i) => ({
    event: i % 7 === 0 ? '' : `e${i}`,
    distinct_id: `u${i % 3}`,
    uuid: `0190f000-0000-7000-8000-${String(i).padStart(12, '0')}`,
    timestamp: '2026-11-23T11:59:00Z',
    properties: { i, text: 'ünïcödé\u0000', nested: { a: [1, 2] } },
  }))
  return Buffer.from(JSON.stringify({ api_key: 'phc_test', sent_at: '2026-11-23T11:59:01Z', batch }))
}

const noRandom = () => {
  throw new Error('every event carries its uuid')
}

test('a decode thread answers what the inline transform answers, for gzip and plain bodies', async (t) => {
  const pool = createDecodePool({ threads: 2 })
  t.after(() => pool.close())
  for (const [body, enc] of [[batchBody(50), null], [gzipSync(batchBody(120)), 'gzip']] as const) {
    const inline = transformCaptureRequest(input(body, enc), noRandom)
    const threaded = await pool.run(input(body, enc))
    assert.deepEqual(threaded, inline)
    assert.equal(threaded.token, 'phc_test')
    assert.ok(threaded.heads.length > 0 && threaded.drops.length > 0, 'events kept and dropped (no name)')
  }
})

test('an invalid body decoded in a thread rejects with the same AppError as inline', async (t) => {
  const pool = createDecodePool({ threads: 1 })
  t.after(() => pool.close())
  const bad = input(Buffer.from('{"batch": [nope'))
  const inlineErr = (() => {
    try {
      transformCaptureRequest(bad, noRandom)
    } catch (err) {
      return err
    }
  })()
  assert.ok(inlineErr instanceof AppError)
  await assert.rejects(pool.run(bad), (err: unknown) => {
    assert.ok(err instanceof AppError)
    assert.equal(err.code, inlineErr.code)
    assert.equal(err.message, inlineErr.message)
    return true
  })
})

test('a thread that ends mid-request fails that request with 503 service_unavailable and a new thread serves the next', async (t) => {
  // Armed here, handed to the thread by the pool: the thread exits on its second request.
  installCrashPoints({ crashAt: { point: 'capture.decode-thread-exit', nth: 2 } })
  t.after(() => installCrashPoints({ crashAt: null }))
  const pool = createDecodePool({ threads: 1 })
  t.after(() => pool.close())
  const body = batchBody(10)
  // The thread is spawned by this first request, with the point armed.
  assert.equal((await pool.run(input(body))).heads.length, 8)
  installCrashPoints({ crashAt: null })
  await assert.rejects(pool.run(input(body)), (err: unknown) => {
    assert.ok(err instanceof AppError)
    assert.equal(err.code, 'service_unavailable')
    assert.equal(err.extra?.retryAfterSeconds, 5)
    return true
  })
  // The replacement starts unarmed (the point was disarmed after the pool started).
  assert.equal((await pool.run(input(body))).heads.length, 8)
})

test('threads start with the first request and end when idle; the next request starts them again', async (t) => {
  const pool = createDecodePool({ threads: 2, idleMs: 100 })
  t.after(() => pool.close())
  assert.equal(pool.liveThreads(), 0, 'no thread before a request')
  const body = batchBody(10)
  assert.equal((await pool.run(input(body))).heads.length, 8)
  assert.equal(pool.liveThreads(), 2)
  const deadline = Date.now() + 10_000
  while (pool.liveThreads() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
  assert.equal(pool.liveThreads(), 0, 'idle threads ended')
  assert.equal((await pool.run(input(body))).heads.length, 8)
  assert.equal(pool.liveThreads(), 2)
})
