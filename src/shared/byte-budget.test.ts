import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ByteBudget } from './byte-budget.ts'

test('claims past the limit wait, in arrival order, until bytes are released', async () => {
  const b = new ByteBudget(100)
  const order: string[] = []
  await b.acquire(60)
  const second = b.acquire(60).then(() => order.push('second'))
  const third = b.acquire(10).then(() => order.push('third'))
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(order, []) // the small third claim does not jump the queue
  assert.deepEqual(b.state(), { held: 60, waiting: 2 })
  b.release(60)
  await Promise.all([second, third])
  assert.deepEqual(order, ['second', 'third'])
  assert.equal(b.state().held, 70)
})

test('one claim larger than the limit goes through when nothing else is held', async () => {
  const b = new ByteBudget(100)
  await b.acquire(500)
  assert.deepEqual(b.state(), { held: 500, waiting: 0 })
  const next = b.acquire(1)
  b.release(500)
  await next
  assert.equal(b.state().held, 1)
})
