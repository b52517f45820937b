import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClaimedMessage, OutboxMessage, OutboxStore } from '../../src/modules/notifications/outbox-store.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The outbox store with and without leases (PostgreSQL's several senders, PGlite's one). */
export type OutboxStores = (leases: boolean) => OutboxStore

/** What the sender relies on: batch rows claimed oldest first within a channel's share, outcomes written in one call. */
export function outboxStoreContract(name: string, open: OpenInWorld<OutboxStores>): void {
  const message = (projectId: number, channel: string, n: number): OutboxMessage => ({
    projectId, channel, idempotencyKey: `${channel}:${n}`, url: `https://example.com/${channel}`, headers: { 'x-channel': channel }, body: `{"n":${n}}`,
  })

  const keysOf = (messages: readonly ClaimedMessage[]) => messages.map((m) => m.idempotencyKey)
  const batchIds = (messages: readonly ClaimedMessage[]) => [...new Set(messages.filter((m) => m.batch).map((m) => m.id))]

  for (const leases of [true, false]) {
    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): a claim takes each channel's oldest batches up to its share, skips full channels and excluded rows`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      // Two micro-batches, each a batch row per channel.
      assert.equal(await outbox.enqueue(['a', 'b', 'c'].flatMap((channel) => [1, 2].map((n) => message(world.projectId, channel, n)))), 6)
      assert.equal(await outbox.enqueue(['a', 'b', 'c'].flatMap((channel) => [3, 4].map((n) => message(world.projectId, channel, n)))), 6)
      assert.equal(await outbox.enqueue([1, 2].map((n) => message(world.projectId, 'a', n))), 0, 'a redelivered micro-batch adds nothing')
      const first = await outbox.claimDue(100, 60_000, { perChannel: 2, skip: ['c'] })
      assert.deepEqual(keysOf(first), ['a:1', 'a:2', 'b:1', 'b:2'])
      assert.deepEqual(first[0]!.headers, { 'x-channel': 'a' })
      assert.deepEqual(first.map((m) => [m.batch, m.index, m.attempts]), [[true, 0, 0], [true, 1, 0], [true, 0, 0], [true, 1, 0]])
      // Leased rows are not due; without leases the sender names what it holds.
      const second = await outbox.claimDue(100, 60_000, { perChannel: 2, skip: ['c'], ...(leases ? {} : { excludeBatches: batchIds(first) }) })
      assert.deepEqual(keysOf(second), ['a:3', 'a:4', 'b:3', 'b:4'])
      assert.deepEqual(keysOf(await outbox.claimDue(100, 60_000, { perChannel: 3, skip: ['a', 'b'] })), ['c:1', 'c:2', 'c:3', 'c:4'], 'rows are taken while under the share')
    })

    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): messages of one channel with other headers or another URL go out with their own`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      const base = message(world.projectId, 'h', 1)
      const shared = { 'x-channel': 'h' }
      await outbox.enqueue([
        { ...base, headers: shared },
        { ...message(world.projectId, 'h', 2), headers: { 'x-channel': 'h' } },
        { ...message(world.projectId, 'h', 3), headers: { 'x-channel': 'other' } },
        { ...message(world.projectId, 'h', 4), headers: shared, url: 'https://example.com/elsewhere' },
      ])
      const claimed = await outbox.claimDue(10, 60_000)
      assert.deepEqual(
        claimed.map((m) => [m.idempotencyKey, m.url, m.headers['x-channel']]).sort(),
        [['h:1', 'https://example.com/h', 'h'], ['h:2', 'https://example.com/h', 'h'], ['h:3', 'https://example.com/h', 'other'], ['h:4', 'https://example.com/elsewhere', 'h']],
      )
      assert.equal(batchIds(claimed).length, 3, 'equal headers share a batch row, whether or not the same object')
    })

    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): a batch done in one write; its unsent messages get rows of their own, retried or dead-lettered, and replay`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      await outbox.enqueue([1, 2, 3, 4].map((n) => message(world.projectId, 'd', n)))
      const [sent, retried, failed, untried] = await outbox.claimDue(10, 60_000)
      const unsent = (m: ClaimedMessage, status: 'pending' | 'failed', attempts: number, retryAt: Date, httpStatus: number | null, error: string | null) => ({ message: m, status, attempts, retryAt, httpStatus, error })
      await outbox.settle([], [{
        id: sent!.id,
        httpStatus: 200,
        unsent: [
          unsent(retried!, 'pending', 1, new Date(Date.now() + 3_600_000), 503, 'answered 503'),
          unsent(failed!, 'failed', 1, new Date(), 400, 'answered 400'),
          unsent(untried!, 'pending', 0, new Date(Date.now() + 3_600_000), null, null),
        ],
      }])
      const rows = await outbox.recent(world.projectId, 'd', 10)
      assert.deepEqual(
        rows.map((r) => [r.idempotencyKey, r.status, r.attempts, r.lastStatus, r.lastError, r.sentAt !== null]).sort(),
        [['d:1', 'sent', 1, 200, null, true], ['d:2', 'pending', 1, 503, 'answered 503', false], ['d:3', 'failed', 1, 400, 'answered 400', false], ['d:4', 'pending', 0, null, null, false]],
      )
      assert.equal(new Set(rows.map((r) => r.createdAt.getTime())).size, 1, 'own rows keep their batch\'s queue time')
      assert.deepEqual(await outbox.claimDue(10, 60_000), [], 'nothing due: the batch is done, the retries an hour away')
      assert.equal(await outbox.replayFailed(world.projectId, 'd'), 1)
      const [replayed] = await outbox.claimDue(10, 60_000)
      assert.deepEqual([replayed!.idempotencyKey, replayed!.batch, replayed!.attempts, replayed!.body], ['d:3', false, 0, '{"n":3}'])
      await outbox.settle([{ id: replayed!.id, status: 'sent', httpStatus: 201 }])
      const again = (await outbox.recent(world.projectId, 'd', 10)).find((r) => r.idempotencyKey === 'd:3')!
      assert.deepEqual([again.status, again.attempts, again.lastStatus], ['sent', 1, 201], 'a replay starts its tries again')
    })

    test(`${name} outbox (${leases ? 'leases' : 'no leases'}): settled rows queued before a time are deleted step by step; pending ones stay; the backlog drops the oldest`, async (t) => {
      const { port, world, close } = await open()
      t.after(close)
      const outbox = port(leases)
      await outbox.enqueue([1, 2, 3].map((n) => message(world.projectId, 'e', n)))
      await new Promise((r) => setTimeout(r, 5))
      await outbox.enqueue([4, 5].map((n) => message(world.projectId, 'e', n)))
      const [sent, failed, retried] = await outbox.claimDue(10, 60_000)
      await outbox.settle([], [{
        id: sent!.id,
        httpStatus: 200,
        unsent: [
          { message: failed!, status: 'failed', attempts: 1, retryAt: new Date(), httpStatus: 400, error: 'answered 400' },
          { message: retried!, status: 'pending', attempts: 1, retryAt: new Date(), httpStatus: 503, error: 'answered 503' },
        ],
      }])
      assert.deepEqual((await outbox.pendingByChannel()).get('e')?.pending, 3)
      assert.equal(await outbox.dropOverBacklog('e', 2), 1, 'the oldest pending one past two is dropped')
      assert.deepEqual((await outbox.pendingByChannel()).get('e')?.pending, 2)
      const keys = async () => (await outbox.recent(world.projectId, 'e', 10)).map((r) => `${r.idempotencyKey}:${r.status}`).sort()
      assert.deepEqual(await keys(), ['e:1:sent', 'e:2:failed', 'e:3:dropped', 'e:4:pending', 'e:5:pending'])
      assert.equal(await outbox.deleteSettled(new Date(Date.now() - 3_600_000), 10), 0, 'nothing was queued an hour ago')
      const later = new Date(Date.now() + 1000)
      assert.equal(await outbox.deleteSettled(later, 2), 2, 'a step deletes at most its limit')
      assert.deepEqual(await keys(), ['e:3:dropped', 'e:4:pending', 'e:5:pending'], 'the batch row first, then the oldest own row')
      assert.equal(await outbox.deleteSettled(later, 10), 1)
      assert.deepEqual(await keys(), ['e:4:pending', 'e:5:pending'])
      assert.equal(await outbox.dropOverBacklog('e', 1), 2, 'a batch row is dropped whole')
      assert.deepEqual(await keys(), ['e:4:dropped', 'e:5:dropped'])
    })
  }

  test(`${name} outbox (leases): a renewed lease keeps a row from other senders; one run out lets them take it`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const outbox = port(true)
    await outbox.enqueue([message(world.projectId, 'f', 1)])
    await outbox.enqueue([message(world.projectId, 'f', 2)])
    const [kept, lapsed] = await outbox.claimDue(10, 1)
    await outbox.extendLeases([], [kept!.id], 60_000)
    await new Promise((r) => setTimeout(r, 20))
    assert.deepEqual(keysOf(await outbox.claimDue(10, 60_000)), [lapsed!.idempotencyKey])
  })
}
