import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { recentUuids } from './recent-uuids.ts'

test('every one of the latest uuids is held, through rotations', () => {
  const recent = recentUuids(1000)
  const ids = Array.from({ length: 10_500 }, () => randomUUID())
  ids.forEach((u, i) => recent.add(u, i))
  // 10,500 added: the current generation holds the last 500, the previous the 1,000 before them.
  assert.equal(recent.size, 1500)
  assert.ok(ids.slice(-1500).every((u) => recent.mayHave(u)))
  assert.equal(recent.earliestMs(), 9000)
  // Dropped with their generation (a few could collide; none of 5,000 is expected to).
  assert.equal(ids.slice(0, 5000).filter((u) => recent.mayHave(u)).length, 0)
})

test('unknown uuids are rarely held: none of 200,000 against 100,000', () => {
  const recent = recentUuids(100_000)
  for (let i = 0; i < 100_000; i++) recent.add(randomUUID(), i)
  let hits = 0
  for (let i = 0; i < 200_000; i++) if (recent.mayHave(randomUUID())) hits++
  assert.equal(hits, 0)
})

test('sequential ids spread too', () => {
  const recent = recentUuids(50_000)
  const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
  for (let i = 0; i < 50_000; i++) recent.add(id(i), 0)
  assert.ok(Array.from({ length: 50_000 }, (_, i) => id(i)).every((u) => recent.mayHave(u)))
  assert.equal(Array.from({ length: 50_000 }, (_, i) => id(100_000 + i)).filter((u) => recent.mayHave(u)).length, 0)
})

test('empty: nothing held, no earliest time; a generation size must be a positive integer', () => {
  const recent = recentUuids(4)
  assert.equal(recent.mayHave(randomUUID()), false)
  assert.equal(recent.earliestMs(), Infinity)
  assert.throws(() => recentUuids(0), RangeError)
})
