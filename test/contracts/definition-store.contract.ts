import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { SeenDefinitions, SeenProperty } from '../../src/domain/definitions/index.ts'
import type { DefinitionStore } from '../../src/modules/definitions/definition-store.ts'
import type { EventDefinitionQuery, PropertyDefinitionQuery } from '../../src/modules/definitions/definition-types.ts'
import type { OpenInWorld } from './sql-harness.ts'

const PAGE = { limit: 100, offset: 0 }
const EVENTS_Q: EventDefinitionQuery = { search: [], eventType: 'event', ordering: 'name' }
const PROPS_Q: PropertyDefinitionQuery = {
  type: 1, groupTypeIndex: null, search: [], names: null, isNumerical: null, isFeatureFlag: null, excluded: [], excludeCoreProperties: false, eventNames: null, filterByEventNames: false,
}

const eventProp = (projectId: number, name: string, propertyType: SeenProperty['propertyType']): SeenProperty =>
  ({ projectId, type: 1, groupTypeIndex: -1, name, propertyType })

function seen(projectId: number, event: string, props: Record<string, SeenProperty['propertyType']>): SeenDefinitions {
  return {
    events: [{ projectId, name: event }],
    properties: Object.entries(props).map(([name, type]) => eventProp(projectId, name, type)),
    eventProperties: Object.keys(props).map((property) => ({ projectId, event, property })),
  }
}

/** What every DefinitionStore adapter promises. */
export function definitionStoreContract(name: string, open: OpenInWorld<DefinitionStore>): void {
  test(`${name} definitions: recordSeen creates, bumps last_seen_at forward only, keeps the first type and fills a missing one`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = world.projectId
    const t1 = new Date('2026-03-01T10:00:00Z')
    await port.recordSeen(seen(p, 'signed up', { plan: 'String', extra: null }), t1)
    const [e1] = (await port.listEvents(p, EVENTS_Q, PAGE)).rows
    assert.equal(e1!.name, 'signed up')
    assert.equal(e1!.lastSeenAt.toISOString(), t1.toISOString())

    const t2 = new Date('2026-03-01T12:00:00Z')
    await port.recordSeen(seen(p, 'signed up', { plan: 'Numeric', extra: 'Boolean' }), t2)
    await port.recordSeen(seen(p, 'signed up', { plan: 'Numeric' }), new Date('2026-02-01T00:00:00Z'))
    const [e2] = (await port.listEvents(p, EVENTS_Q, PAGE)).rows
    assert.equal(e2!.id, e1!.id)
    assert.equal(e2!.createdAt.getTime(), e1!.createdAt.getTime())
    assert.equal(e2!.lastSeenAt.toISOString(), t2.toISOString())
    const props = (await port.listProperties(p, PROPS_Q, PAGE)).rows
    assert.deepEqual(props.map((d) => [d.name, d.propertyType, d.lastSeenAt.toISOString()]), [['extra', 'Boolean', t2.toISOString()], ['plan', 'String', t2.toISOString()]])
  })

  test(`${name} definitions: kinds and group type indexes are separate definitions of the same name`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = world.projectId
    await port.recordSeen({
      events: [],
      eventProperties: [],
      properties: [eventProp(p, 'name', 'String'), { projectId: p, type: 2, groupTypeIndex: -1, name: 'name', propertyType: 'Numeric' },
        { projectId: p, type: 3, groupTypeIndex: 2, name: 'name', propertyType: 'Boolean' }],
    }, new Date())
    const of = async (type: 1 | 2 | 3, groupTypeIndex: number | null) =>
      (await port.listProperties(p, { ...PROPS_Q, type, groupTypeIndex }, PAGE)).rows.map((d) => [d.name, d.propertyType, d.type, d.groupTypeIndex])
    assert.deepEqual(await of(1, null), [['name', 'String', 1, null]])
    assert.deepEqual(await of(2, null), [['name', 'Numeric', 2, null]])
    assert.deepEqual(await of(3, 2), [['name', 'Boolean', 3, 2]])
    assert.deepEqual(await of(3, 0), [])
  })

  test(`${name} definitions: event_names flags and filters, search escapes LIKE characters, names and exclusions`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = world.projectId
    await port.recordSeen(seen(p, 'a', { x_1: 'String', amount: 'Numeric' }), new Date())
    await port.recordSeen(seen(p, 'b', { xy1: 'String', timestamp: 'Numeric' }), new Date())
    const list = async (q: Partial<PropertyDefinitionQuery>) => {
      const r = await port.listProperties(p, { ...PROPS_Q, ...q }, PAGE)
      return { count: r.count, rows: r.rows.map((d) => [d.name, d.isSeenOnFilteredEvents]) }
    }
    assert.deepEqual(await list({ eventNames: ['a'] }), { count: 4, rows: [['amount', true], ['x_1', true], ['timestamp', false], ['xy1', false]] })
    assert.deepEqual(await list({ eventNames: ['a'], filterByEventNames: true }), { count: 2, rows: [['amount', true], ['x_1', true]] })
    assert.deepEqual(await list({ search: ['X_'] }), { count: 1, rows: [['x_1', null]] })
    assert.deepEqual(await list({ search: ['x', '1'] }), { count: 2, rows: [['x_1', null], ['xy1', null]] })
    assert.deepEqual(await list({ search: ['a\u0000'] }), { count: 0, rows: [] })
    // PostHog leaves `timestamp` and `distinct_id` out of numerical properties.
    assert.deepEqual(await list({ isNumerical: true }), { count: 1, rows: [['amount', null]] })
    assert.deepEqual(await list({ names: ['xy1', 'amount', 'nope'], excluded: ['amount'] }), { count: 1, rows: [['xy1', null]] })
    const page = await port.listProperties(p, PROPS_Q, { limit: 2, offset: 1 })
    assert.deepEqual([page.count, page.rows.map((d) => d.name)], [4, ['timestamp', 'x_1']])
  })

  test(`${name} definitions: projects are independent, also by id`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.recordSeen(seen(world.projectId, 'mine', { secret: 'String' }), new Date())
    await port.recordSeen(seen(world.otherProjectId, 'theirs', { other: 'String' }), new Date())
    const [mine] = (await port.listEvents(world.projectId, EVENTS_Q, PAGE)).rows
    const [prop] = (await port.listProperties(world.projectId, { ...PROPS_Q, eventNames: ['theirs'], filterByEventNames: true }, PAGE)).rows
    assert.equal(prop, undefined)
    assert.equal(mine!.name, 'mine')
    assert.equal((await port.getEvent(world.projectId, mine!.id))?.name, 'mine')
    assert.equal(await port.getEvent(world.otherProjectId, mine!.id), null)
    assert.equal(await port.getEvent(world.projectId, 'not-a-uuid'), null)
    const [secret] = (await port.listProperties(world.projectId, PROPS_Q, PAGE)).rows
    assert.equal((await port.getProperty(world.projectId, secret!.id))?.name, 'secret')
    assert.equal(await port.getProperty(world.otherProjectId, secret!.id), null)
  })

  test(`${name} definitions: names that store alike (U+0000) in one batch, and concurrent writers, do not fail`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = world.projectId
    await port.recordSeen(seen(p, 'e\u0000', { 'k\u0000': 'String', 'k\uFFFD': 'Numeric' }), new Date())
    const batches = Array.from({ length: 6 }, (_, i) => seen(p, `e${i % 2}`, { shared: 'String', [`own${i}`]: 'Numeric' }))
    await Promise.all(batches.map((b) => port.recordSeen(b, new Date())))
    const events = (await port.listEvents(p, EVENTS_Q, PAGE)).rows.map((e) => e.name)
    assert.deepEqual(events, ['e0', 'e1', 'e\uFFFD'])
    const props = (await port.listProperties(p, PROPS_Q, PAGE)).rows.map((d) => d.name)
    assert.deepEqual(props, ['k\uFFFD', 'own0', 'own1', 'own2', 'own3', 'own4', 'own5', 'shared'])
  })
}
