import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { OutboxMessage, OutboxStore } from '../../src/modules/notifications/outbox-store.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The outbox store with and without leases (PostgreSQL's several senders, PGlite's one). */
export type OutboxStores = (leases: boolean) => OutboxStore

/** What the sender relies on: claims oldest first within a channel's share, outcomes written in one call. */
export function outboxStoreContract(name: string, open: OpenInWorld<OutboxStores>): void {
  const message = (projectId: number, channel: string, n: number): OutboxMessage => ({
    projectId, channel, idempotencyKey: `${channel}:${n}`, url: `https://example.com/${channel}`, headers: { 'x-n': String(n) }, body: `{"n":${n}}`,
  })

  for (const leases of [true, false]) {
    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): a claim takes each channel's oldest share, skips full channels and excluded ids`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      const all = ['a', 'b', 'c'].flatMap((channel) => [1, 2, 3, 4].map((n) => message(world.projectId, channel, n)))
      assert.equal(await outbox.enqueue(all), 12)
      assert.equal(await outbox.enqueue([message(world.projectId, 'a', 1)]), 0, 'a key already there adds nothing')
      const first = await outbox.claimDue(100, 60_000, { perChannel: 2, skip: ['c'] })
      assert.deepEqual(first.map((m) => m.idempotencyKey), ['a:1', 'a:2', 'b:1', 'b:2'])
      assert.deepEqual(first[0]!.headers, { 'x-n': '1' })
      assert.equal(first[0]!.attempts, 0)
      // Leased messages are not due; without leases the sender names what it holds.
      const second = await outbox.claimDue(100, 60_000, { perChannel: 2, skip: ['c'], ...(leases ? {} : { exclude: first.map((m) => m.id) }) })
      assert.deepEqual(second.map((m) => m.idempotencyKey), ['a:3', 'a:4', 'b:3', 'b:4'])
    })

    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): outcomes written together; a retry is due later, a dead letter replays`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      await outbox.enqueue([1, 2, 3].map((n) => message(world.projectId, 'd', n)))
      const [sent, retried, failed] = await outbox.claimDue(10, 60_000)
      await outbox.settle([
        { id: sent!.id, status: 'sent', httpStatus: 200 },
        { id: retried!.id, status: 'retry', retryAt: new Date(Date.now() + 3_600_000), httpStatus: 503, error: 'answered 503' },
        { id: failed!.id, status: 'failed', httpStatus: 400, error: 'answered 400' },
      ])
      const rows = new Map((await outbox.recent(world.projectId, 'd', 10)).map((r) => [r.idempotencyKey, r]))
      assert.deepEqual(
        [...rows.values()].map((r) => [r.idempotencyKey, r.status, r.attempts, r.lastStatus, r.lastError, r.sentAt !== null]).sort(),
        [['d:1', 'sent', 1, 200, null, true], ['d:2', 'pending', 1, 503, 'answered 503', false], ['d:3', 'failed', 1, 400, 'answered 400', false]],
      )
      assert.deepEqual(await outbox.claimDue(10, 60_000), [], 'nothing due: the retry is an hour away')
      assert.equal(await outbox.replayFailed(world.projectId, 'd'), 1)
      assert.deepEqual((await outbox.claimDue(10, 60_000)).map((m) => [m.idempotencyKey, m.attempts]), [['d:3', 0]])
    })

    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): settled messages queued before a time are deleted oldest first, step by step; pending ones stay`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      await outbox.enqueue([1, 2, 3, 4, 5].map((n) => message(world.projectId, 'e', n)))
      const [sent, failed, dropped, retried] = await outbox.claimDue(10, 60_000)
      await outbox.settle([
        { id: sent!.id, status: 'sent', httpStatus: 200 },
        { id: failed!.id, status: 'failed', httpStatus: 400, error: 'answered 400' },
        { id: retried!.id, status: 'retry', retryAt: new Date(), httpStatus: 503, error: 'answered 503' },
      ])
      await outbox.postpone([dropped!.id], new Date())
      assert.equal(await outbox.dropOverBacklog('e', 2), 1, 'the oldest pending one past two is dropped')
      const keys = async () => (await outbox.recent(world.projectId, 'e', 10)).map((r) => `${r.idempotencyKey}:${r.status}`).sort()
      assert.deepEqual(await keys(), ['e:1:sent', 'e:2:failed', 'e:3:dropped', 'e:4:pending', 'e:5:pending'])
      assert.equal(await outbox.deleteSettled(new Date(Date.now() - 3_600_000), 10), 0, 'nothing was queued an hour ago')
      const later = new Date(Date.now() + 1000)
      assert.equal(await outbox.deleteSettled(later, 2), 2, 'a step deletes at most its limit')
      assert.deepEqual(await keys(), ['e:3:dropped', 'e:4:pending', 'e:5:pending'], 'the oldest settled ones went first')
      assert.equal(await outbox.deleteSettled(later, 10), 1)
      assert.deepEqual(await keys(), ['e:4:pending', 'e:5:pending'])
    })
  }
}
