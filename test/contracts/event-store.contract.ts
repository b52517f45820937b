import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventReadStore, EventRow } from '../../src/modules/events/event-read-store.ts'
import type { EventStore, StoredEvent } from '../../src/ingestion/event-store.ts'
import { anEvent, TRICKY_JSON } from './builders.ts'
import type { Open } from './sql-harness.ts'

/** The append-only event store and its read side, over the same events. */
export interface EventPorts {
  events: EventStore
  reads: EventReadStore
}

const micros = (d: Date) => BigInt(d.getTime()) * 1000n
const uuidAt = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const query = (projectId: number, over: Partial<Parameters<EventReadStore['list']>[0]> = {}) => ({ projectId, properties: [], limit: 100, offset: 0, ...over })
const uuids = (rows: EventRow[]) => rows.map((r) => r.uuid)

/** What every EventStore + EventReadStore adapter pair promises (DuckDB embedded, ClickHouse at scale). */
export function eventStoreContract(name: string, open: Open<EventPorts>): void {
  test(`${name} events: an inserted event reads back exactly, properties text and microseconds included`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const e = anEvent({ properties: JSON.stringify(TRICKY_JSON), elementsChain: 'a.btn:text="Ok ☕"', personId: '01890a5d-ac96-774b-bcce-7a0c2a9c3b1e', distinctId: 'ü 😀' })
    assert.deepEqual(await port.events.insertBatch([e]), { inserted: 1 })
    const row = await port.reads.get(e.projectId, e.uuid)
    assert.deepEqual(row, {
      uuid: e.uuid,
      event: e.event,
      distinctId: 'ü 😀',
      properties: e.properties,
      elementsChain: e.elementsChain,
      timestampMicros: micros(e.timestamp),
      personId: e.personId,
    })
    assert.deepEqual(JSON.parse(row!.properties), TRICKY_JSON)
    assert.equal(await port.reads.get(e.projectId + 1, e.uuid), null)
    assert.equal(await port.reads.get(e.projectId, uuidAt(999)), null)
  })

  test(`${name} events: timestamps before 1970 and far in the future keep their exact millisecond`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const instants = ['1969-12-31T23:59:59.999Z', '1900-02-28T12:00:00.001Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '2026-03-29T01:00:00.000Z']
    await port.events.insertBatch(instants.map((iso, i) => anEvent({ uuid: uuidAt(i + 1), timestamp: new Date(iso) })))
    for (const [i, iso] of instants.entries()) {
      assert.equal((await port.reads.get(1, uuidAt(i + 1)))?.timestampMicros, micros(new Date(iso)), iso)
    }
  })

  test(`${name} events: a uuid is stored once, across batches and within one`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const a = anEvent({ uuid: uuidAt(1) })
    const b = anEvent({ uuid: uuidAt(2) })
    assert.deepEqual(await port.events.insertBatch([a, b, { ...b, event: 'copy' }]), { inserted: 2 })
    assert.deepEqual(await port.events.insertBatch([a, anEvent({ uuid: uuidAt(3) })]), { inserted: 1 })
    assert.deepEqual(await port.events.insertBatch([]), { inserted: 0 })
    assert.deepEqual(uuids(await port.reads.list(query(1))).sort(), [uuidAt(1), uuidAt(2), uuidAt(3)])
    assert.equal((await port.reads.get(1, uuidAt(2)))?.event, '$pageview')
  })

  test(`${name} events: list is newest first (timestamp, then uuid), pages, and stays in its project`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const at = (iso: string) => new Date(iso)
    await port.events.insertBatch([
      anEvent({ uuid: uuidAt(1), timestamp: at('2026-01-01T00:00:00.001Z') }),
      anEvent({ uuid: uuidAt(2), timestamp: at('2026-01-03T00:00:00Z') }),
      anEvent({ uuid: uuidAt(3), timestamp: at('2026-01-02T00:00:00Z') }),
      anEvent({ uuid: uuidAt(4), timestamp: at('2026-01-02T00:00:00Z') }),
      anEvent({ uuid: uuidAt(5), timestamp: at('2026-01-05T00:00:00Z'), projectId: 2 }),
    ])
    assert.deepEqual(uuids(await port.reads.list(query(1))), [uuidAt(2), uuidAt(4), uuidAt(3), uuidAt(1)])
    assert.deepEqual(uuids(await port.reads.list(query(1, { limit: 2, offset: 1 }))), [uuidAt(4), uuidAt(3)])
    assert.deepEqual(uuids(await port.reads.list(query(1, { offset: 10 }))), [])
    assert.deepEqual(uuids(await port.reads.list(query(2))), [uuidAt(5)])
  })

  test(`${name} events: after/before are exclusive, whatever zone the bound is written in; the uuid cursor breaks ties`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const ts = new Date('2026-03-29T01:30:00.250Z') // inside Europe's daylight-saving change
    await port.events.insertBatch([
      anEvent({ uuid: uuidAt(1), timestamp: new Date(ts.getTime() - 1) }),
      anEvent({ uuid: uuidAt(2), timestamp: ts }),
      anEvent({ uuid: uuidAt(3), timestamp: ts }),
      anEvent({ uuid: uuidAt(4), timestamp: new Date(ts.getTime() + 1) }),
    ])
    const offsetForm = '2026-03-29T03:30:00.250+02:00' // the same instant as ts
    assert.deepEqual(uuids(await port.reads.list(query(1, { after: offsetForm }))), [uuidAt(4)])
    assert.deepEqual(uuids(await port.reads.list(query(1, { before: offsetForm }))), [uuidAt(1)])
    assert.deepEqual(uuids(await port.reads.list(query(1, { before: ts.toISOString(), beforeUuid: uuidAt(3) }))), [uuidAt(2), uuidAt(1)])
    assert.deepEqual(uuids(await port.reads.list(query(1, { after: '2026-03-29T01:30:00.249Z', before: '2026-03-29T01:30:00.251Z' }))), [uuidAt(3), uuidAt(2)])
  })

  test(`${name} events: filters by event name, distinct id and event properties`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const e = (n: number, over: Partial<StoredEvent>, props: Record<string, unknown>) =>
      anEvent({ uuid: uuidAt(n), timestamp: new Date(Date.UTC(2026, 0, n)), properties: JSON.stringify(props), ...over })
    await port.events.insertBatch([
      e(1, { event: 'signup' }, { plan: 'Free', n: 5, "it's": 'quoted key' }),
      e(2, { event: 'signup', distinctId: 'other' }, { plan: 'pro', n: 50 }),
      e(3, { event: 'login' }, { plan: 'free plan', n: 500 }),
      e(4, { event: 'login' }, {}),
    ])
    const list = async (over: Partial<Parameters<EventReadStore['list']>[0]>) => uuids(await port.reads.list(query(1, over))).sort()
    assert.deepEqual(await list({ event: 'signup' }), [uuidAt(1), uuidAt(2)])
    assert.deepEqual(await list({ distinctId: 'other' }), [uuidAt(2)])
    assert.deepEqual(await list({ properties: [{ key: 'plan', value: 'pro', operator: 'exact' }] }), [uuidAt(2)])
    assert.deepEqual(await list({ properties: [{ key: 'plan', value: ['pro', 'Free'], operator: 'exact' }] }), [uuidAt(1), uuidAt(2)])
    assert.deepEqual(await list({ properties: [{ key: 'plan', value: 'pro', operator: 'is_not' }] }), [uuidAt(1), uuidAt(3), uuidAt(4)])
    assert.deepEqual(await list({ properties: [{ key: 'plan', value: 'FREE', operator: 'icontains' }] }), [uuidAt(1), uuidAt(3)])
    assert.deepEqual(await list({ properties: [{ key: 'plan', value: '^f', operator: 'regex' }] }), [uuidAt(3)])
    assert.deepEqual(await list({ properties: [{ key: 'n', value: 50, operator: 'gte' }] }), [uuidAt(2), uuidAt(3)])
    assert.deepEqual(await list({ properties: [{ key: 'n', value: '50', operator: 'lt' }] }), [uuidAt(1)])
    assert.deepEqual(await list({ properties: [{ key: 'plan', operator: 'is_not_set' }] }), [uuidAt(4)])
    assert.deepEqual(await list({ properties: [{ key: "it's", operator: 'is_set' }] }), [uuidAt(1)])
    assert.deepEqual(await list({ event: 'login', properties: [{ key: 'plan', operator: 'is_set' }, { key: 'n', value: 100, operator: 'gt' }] }), [uuidAt(3)])
  })

  test(`${name} events: property keys with quotes, backslashes, dots and brackets are matched literally`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const keys = ['a"b', 'c\\d', 'x.y', '$[0]', "it's", 'ü 😀']
    await port.events.insertBatch(keys.map((k, i) => anEvent({ uuid: uuidAt(i + 1), properties: JSON.stringify({ [k]: `v${i}` }) })))
    for (const [i, key] of keys.entries()) {
      const rows = await port.reads.list(query(1, { properties: [{ key, value: `v${i}`, operator: 'exact' }] }))
      assert.deepEqual(uuids(rows), [uuidAt(i + 1)], key)
    }
    assert.deepEqual(uuids(await port.reads.list(query(1, { properties: [{ key: 'x', operator: 'is_set' }] }))), [])
  })

  test(`${name} events: a large batch with large and multi-byte properties is stored whole`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const big = JSON.stringify({ blob: '☕'.repeat(1_000_000) })
    const batch = Array.from({ length: 2000 }, (_, i) => anEvent({ uuid: uuidAt(i + 1), properties: i === 7 ? big : JSON.stringify({ i, s: '日本語' }) }))
    assert.deepEqual(await port.events.insertBatch(batch), { inserted: 2000 })
    assert.equal((await port.reads.get(1, uuidAt(8)))?.properties, big)
    assert.equal((await port.reads.list(query(1, { limit: 5000 }))).length, 2000)
  })
}
