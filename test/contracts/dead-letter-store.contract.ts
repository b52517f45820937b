import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { DeadLetter, DeadLetterStore } from '../../src/ingestion/dead-letter-store.ts'
import { aDeadLetter, TRICKY_JSON } from './builders.ts'
import type { Open } from './sql-harness.ts'

/**
 * The dead-letter store, and a way to read back what it holds: the port is write-only (letters are
 * read by operators, replay tooling), so each adapter's runner supplies the read.
 */
export interface DeadLetterPorts {
  letters: DeadLetterStore
  readAll(): Promise<DeadLetter[]>
}

/** A dead-letter row as an adapter's table gives it (`failed_ms`: epoch milliseconds), as a DeadLetter. */
export function deadLetterFromRow(r: Record<string, unknown>): DeadLetter {
  return {
    payload: String(r.payload),
    uuid: r.uuid === null ? null : String(r.uuid),
    projectId: r.project_id === null ? null : Number(r.project_id),
    step: String(r.step),
    reason: String(r.reason),
    error: r.error === null ? null : String(r.error),
    failedAt: new Date(Number(r.failed_ms)),
  }
}

const byUuid = (a: DeadLetter, b: DeadLetter) => String(a.uuid).localeCompare(String(b.uuid))

/** What every DeadLetterStore adapter promises. */
export function deadLetterStoreContract(name: string, open: Open<DeadLetterPorts>): void {
  test(`${name} dead letters: every field round-trips, nulls and unicode included`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const letters = [
      aDeadLetter({ uuid: 'a', payload: `{"h":1}\t${JSON.stringify(TRICKY_JSON)}`, error: 'Error: boom\n    at step (x.ts:1:1)', failedAt: new Date('2026-03-29T01:30:00.123Z') }),
      aDeadLetter({ uuid: 'b', projectId: null, error: null, reason: 'unparseable ☕', payload: 'not json \u0001' }),
    ]
    await port.letters.insert(letters)
    assert.deepEqual((await port.readAll()).sort(byUuid), letters)
  })

  test(`${name} dead letters: a letter without uuid or project is kept`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const letter = aDeadLetter({ uuid: null, projectId: null })
    await port.letters.insert([letter])
    assert.deepEqual(await port.readAll(), [letter])
  })

  test(`${name} dead letters: inserts append, the same letter twice included; an empty insert writes nothing`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const letter = aDeadLetter({ uuid: 'same' })
    await port.letters.insert([])
    await port.letters.insert([letter])
    await port.letters.insert([letter, aDeadLetter({ uuid: 'other' })])
    assert.deepEqual((await port.readAll()).map((l) => l.uuid).sort(), ['other', 'same', 'same'])
  })

  test(`${name} dead letters: a large batch and a large payload are written whole`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const big = aDeadLetter({ uuid: 'big', payload: 'x'.repeat(2_000_000) })
    const many = Array.from({ length: 3000 }, (_, i) => aDeadLetter({ uuid: `m${String(i).padStart(5, '0')}` }))
    await port.letters.insert([big, ...many])
    const all = await port.readAll()
    assert.equal(all.length, 3001)
    assert.equal(all.find((l) => l.uuid === 'big')?.payload.length, 2_000_000)
  })

  test(`${name} dead letters: listed newest first with ids, by project and pending; replayed letters are marked, never removed`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    await port.letters.insert([aDeadLetter({ uuid: 'p1-a', projectId: 1 }), aDeadLetter({ uuid: 'p2', projectId: 2 })])
    await port.letters.insert([aDeadLetter({ uuid: 'p1-b', projectId: 1 }), aDeadLetter({ uuid: 'none', projectId: null })])
    const all = await port.letters.list({ limit: 10, offset: 0 })
    assert.equal(all.count, 4)
    assert.deepEqual(all.rows.map((l) => l.uuid), ['none', 'p1-b', 'p2', 'p1-a'])
    assert.ok(all.rows.every((l) => Number.isSafeInteger(l.id) && l.replayedAt === null))
    const p1 = await port.letters.list({ projectId: 1, limit: 1, offset: 1 })
    assert.deepEqual([p1.count, p1.rows.map((l) => l.uuid)], [2, ['p1-a']])
    const at = new Date('2026-11-22T10:00:00.123Z')
    await port.letters.markReplayed([p1.rows[0]!.id], at)
    const pending = await port.letters.list({ projectId: 1, pendingOnly: true, limit: 10, offset: 0 })
    assert.deepEqual(pending.rows.map((l) => l.uuid), ['p1-b'])
    const replayed = (await port.letters.list({ ids: [p1.rows[0]!.id], limit: 10, offset: 0 })).rows[0]!
    assert.deepEqual([replayed.uuid, replayed.replayedAt?.toISOString()], ['p1-a', at.toISOString()])
    assert.equal((await port.letters.list({ ids: [], limit: 10, offset: 0 })).count, 0)
    assert.equal((await port.readAll()).length, 4)
  })
}
