import assert from 'node:assert/strict'
import { test } from 'node:test'
import { summariseSnapshots, type RrwebEvent } from './summarise-snapshots.ts'

const inc = (timestamp: number, data: Record<string, unknown>): RrwebEvent => ({ type: 3, timestamp, data })

test('clicks count MouseInteraction Click, DblClick and TouchEnd only', () => {
  const s = summariseSnapshots([2, 4, 9, 0, 1, 3].map((type, i) => inc(1000 + i, { source: 2, type })))
  assert.equal(s.clicks, 3)
  assert.equal(s.mouseActivity, 6)
})

test('keypresses are Input events; console lines are counted by level', () => {
  const log = (level: string) => ({ type: 6, timestamp: 5, data: { plugin: 'rrweb/console@1', payload: { level, payload: [] } } })
  const s = summariseSnapshots([inc(1, { source: 5, text: 'a' }), inc(2, { source: 5, text: 'ab' }), log('error'), log('warn'), log('log'), log('info'), { type: 6, timestamp: 6, data: { plugin: 'other', payload: { level: 'error' } } }])
  assert.equal(s.keypresses, 2)
  assert.deepEqual([s.consoleErrors, s.consoleWarns, s.consoleLogs], [1, 1, 2])
})

test('active time adds the gaps of at most 5 s between activity events, in time order', () => {
  // 0 -> 2 s (active 2 s), 2 -> 9 s (idle 7 s), 9 -> 14 s (active 5 s); a mutation (source 0) is not activity.
  const s = summariseSnapshots([inc(14_000, { source: 1 }), inc(0, { source: 3 }), inc(9_000, { source: 5 }), inc(2_000, { source: 2, type: 0 }), inc(20_000, { source: 0 })])
  assert.equal(s.activeMs, 7_000)
  assert.deepEqual([s.startMs, s.endMs], [0, 20_000])
})

test('the first URL is the earliest Meta href', () => {
  const meta = (timestamp: number, href: string) => ({ type: 4, timestamp, data: { href } })
  const s = summariseSnapshots([meta(30, 'https://b.example/'), meta(10, 'https://a.example/\u0000x'), meta(20, 'https://c.example/')])
  assert.equal(s.firstUrl, 'https://a.example/\uFFFDx')
  assert.equal(s.firstUrlMs, 10)
})
