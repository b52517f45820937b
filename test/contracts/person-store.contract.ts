import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import type { PersonStore as IngestionPersonStore, GroupStore as IngestionGroupStore } from '../../src/ingestion/person-store.ts'
import type { PersonStore } from '../../src/modules/persons/person-store.ts'
import type { GroupStore } from '../../src/modules/groups/group-store.ts'
import type { PersonDataReader, PersonDataWriter } from '../../src/modules/persons/person-data-store.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The persons API's store and the groups store, with the ingestion stores that write what they read. */
export interface PersonApiPorts {
  persons: PersonStore
  groups: GroupStore
  writer: IngestionPersonStore
  groupWriter: IngestionGroupStore
  /** For the flag-side rows a deletion must take along (hash-key overrides). */
  data: PersonDataReader & PersonDataWriter
}

/** Writes one person with these distinct ids through the ingestion store; resolves with its uuid. */
async function aPerson(w: IngestionPersonStore, projectId: number, distinctIds: string[], properties: Record<string, unknown>, isIdentified = false): Promise<string> {
  const id = randomUUID()
  await w.apply(projectId, {
    upserts: [{ id, distinctIds, properties, isIdentified, createdAt: new Date(), version: 0 }],
    distinctIdMoves: distinctIds.map((distinctId) => ({ distinctId, personId: id })),
    deletes: [],
    overrides: [],
    personlessDistinctIds: [],
  })
  return id
}

const idsOf = (rows: Array<{ distinctIds: string[] }>) => rows.map((p) => [...p.distinctIds].sort().join(','))

/** What every adapter of the persons API's store and the groups store promises. */
export function personApiStoreContract(name: string, open: OpenInWorld<PersonApiPorts>): void {
  test(`${name} person store: list newest first with filters (distinct id, email, search, property operators), count, pages, project scope`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const { projectId } = world
    const a = await aPerson(port.writer, projectId, ['a-anon', 'a'], { email: 'Ann@Example.com', plan: 'pro', seats: 12, beta: true }, true)
    await aPerson(port.writer, projectId, ['b'], { email: 'bob@example.org', plan: 'free', seats: '3', beta: 'false' })
    await aPerson(port.writer, projectId, ['c ☕'], { plan: null })
    await aPerson(port.writer, world.otherProjectId, ['a'], { email: 'Ann@Example.com' })
    const page = { limit: 10, offset: 0 }
    const list = async (q: Parameters<PersonStore['list']>[1]) => idsOf(await port.persons.list(projectId, q, page))
    assert.deepEqual(await list({ properties: [] }), ['c ☕', 'b', 'a,a-anon'])
    assert.deepEqual(idsOf(await port.persons.list(projectId, { properties: [] }, { limit: 1, offset: 1 })), ['b'])
    assert.equal(await port.persons.count(projectId, { properties: [] }), 3)
    assert.deepEqual(await list({ distinctId: 'a-anon', properties: [] }), ['a,a-anon'])
    assert.deepEqual(await list({ email: 'Ann@Example.com', properties: [] }), ['a,a-anon'])
    assert.deepEqual(await list({ search: 'EXAMPLE', properties: [] }), ['b', 'a,a-anon'])
    assert.deepEqual(await list({ search: 'c ☕', properties: [] }), ['c ☕'])
    const props = (filters: Array<{ key: string; value?: unknown; operator?: string }>) => list({ properties: filters })
    assert.deepEqual(await props([{ key: 'plan', value: 'PRO' }]), ['a,a-anon'], 'exact ignores case')
    assert.deepEqual(await props([{ key: 'plan', value: 'pro', operator: 'is_not' }]), ['c ☕', 'b'], 'is_not holds for a missing or other value')
    assert.deepEqual(await props([{ key: 'beta', value: 'true' }]), ['a,a-anon'], 'booleans by truthiness')
    assert.deepEqual(await props([{ key: 'beta', value: false }]), ['b'])
    assert.deepEqual(await props([{ key: 'seats', value: 5, operator: 'gt' }]), ['a,a-anon'])
    assert.deepEqual(await props([{ key: 'seats', value: '3', operator: 'lte' }]), ['b'], 'numeric strings compare as numbers')
    assert.deepEqual(await props([{ key: 'email', value: 'EXAMPLE.org', operator: 'ends_with' }]), ['b'])
    assert.deepEqual(await props([{ key: 'email', value: 'ann', operator: 'starts_with' }]), ['a,a-anon'])
    assert.deepEqual(await props([{ key: 'email', value: 'example', operator: 'not_icontains' }]), ['c ☕'])
    assert.deepEqual(await props([{ key: 'plan', operator: 'is_set' }]), ['c ☕', 'b', 'a,a-anon'])
    assert.deepEqual(await props([{ key: 'plan', value: null }]), [], 'a null filter value matches nothing')
    assert.deepEqual(await props([{ key: 'seats', value: [1, 5], operator: 'between' }]), ['b'])
    assert.deepEqual(await props([{ key: 'x\u0000', value: 'y' }]), [], 'a NUL in a key is a miss, not a failed query')
    assert.deepEqual(await props([{ key: 'email', value: 'Example\\.(com|net)$', operator: 'regex' }]), ['a,a-anon'], 'an unanchored search, case-sensitive')
    assert.deepEqual(await props([{ key: 'email', value: 'EXAMPLE', operator: 'not_regex' }]), ['c ☕', 'b', 'a,a-anon'])
    assert.deepEqual(await props([{ key: 'seats', value: '^1', operator: 'regex' }]), ['a,a-anon'], 'a number by its string form')

    const found = await port.persons.find(projectId, { uuid: a })
    assert.equal(found?.isIdentified, true)
    assert.deepEqual(found?.properties, { email: 'Ann@Example.com', plan: 'pro', seats: 12, beta: true })
    assert.deepEqual(await port.persons.find(projectId, { id: found!.id }), found)
    assert.equal(await port.persons.find(world.otherProjectId, { uuid: a }), null)
    assert.equal(await port.persons.find(projectId, { uuid: 'not-a-uuid' }), null)
    assert.deepEqual(idsOf(await port.persons.findByUuids(projectId, [a, randomUUID(), 'junk'])), ['a,a-anon'])
    const byDistinct = await port.persons.findByDistinctIds(projectId, ['a', 'a-anon', 'nobody', 'c ☕'])
    assert.deepEqual([...byDistinct.keys()].sort(), ['a', 'a-anon', 'c ☕'])
    assert.equal(byDistinct.get('a')!.uuid, a)
    assert.equal(byDistinct.get('a-anon'), byDistinct.get('a'), 'one person object per person')
  })

  test(`${name} person store: regex runs in linear time (a catastrophic pattern on 10,000 characters) and . does not match a newline`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await aPerson(port.writer, world.projectId, ['long'], { s: `${'a'.repeat(10_000)}!`, line: 'a\nb' })
    await aPerson(port.writer, world.projectId, ['short'], { s: 'a'.repeat(10_000), line: 'axb' })
    const list = async (filter: { key: string; value: string; operator: string }) =>
      idsOf(await port.persons.list(world.projectId, { properties: [filter] }, { limit: 10, offset: 0 }))
    assert.deepEqual(await list({ key: 's', value: '^(a+)+$', operator: 'regex' }), ['short'])
    assert.deepEqual(await list({ key: 'line', value: '^a.b$', operator: 'regex' }), ['short'])
    assert.deepEqual(await list({ key: 'line', value: '(?s)^a.b$', operator: 'regex' }), ['short', 'long'])
    await assert.rejects(port.persons.list(world.projectId, { properties: [{ key: 's', value: '(?P<x>a)', operator: 'regex' }] }, { limit: 10, offset: 0 }), (err: any) => err.code === 'validation_error' && err.attr === 'properties')
  })

  test(`${name} person store: delete takes the distinct ids and hash-key overrides along; values counts persons per value`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const { projectId } = world
    const a = await aPerson(port.writer, projectId, ['a1', 'a2'], { color: 'red' })
    await aPerson(port.writer, projectId, ['b1'], { color: 'red' })
    await aPerson(port.writer, projectId, ['c1'], { color: 'blue', n: 1 })
    await aPerson(port.writer, world.otherProjectId, ['z'], { color: 'green' })
    assert.deepEqual(await port.persons.propertyValues(projectId, 'color', { limit: 10 }), [{ value: 'red', count: 2 }, { value: 'blue', count: 1 }])
    assert.deepEqual(await port.persons.propertyValues(projectId, 'color', { limit: 10, search: 'BL' }), [{ value: 'blue', count: 1 }])
    assert.deepEqual(await port.persons.propertyValues(projectId, 'n', { limit: 10 }), [{ value: 1, count: 1 }])

    await port.data.writeHashKeyOverrides({ projectId, distinctIds: ['a1'], flagKeys: ['f'], hashKey: 'h' })
    const person = (await port.persons.find(projectId, { uuid: a }))!
    assert.equal(await port.persons.delete(world.otherProjectId, person.id), null, 'another project cannot delete it')
    const deleted = await port.persons.delete(projectId, person.id)
    assert.deepEqual({ uuid: deleted?.uuid, ids: deleted?.distinctIds.sort() }, { uuid: a, ids: ['a1', 'a2'] })
    assert.equal(await port.persons.find(projectId, { uuid: a }), null)
    assert.equal((await port.persons.findByDistinctIds(projectId, ['a1'])).size, 0)
    assert.equal(await port.persons.delete(projectId, person.id), null)
    assert.deepEqual(await port.persons.propertyValues(projectId, 'color', { limit: 10 }), [{ value: 'blue', count: 1 }, { value: 'red', count: 1 }])
  })

  test(`${name} group store: keyset pages newest first, search by key or name, find, project scope`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const { projectId } = world
    const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s, 0))
    const group = (key: string, s: number, properties: Record<string, unknown> = {}) => ({ typeIndex: 0, key, properties, createdAt: at(s), version: 0 })
    // Two groups share a created_at: the key breaks the tie, and no page skips or repeats one.
    await port.groupWriter.applyGroups(projectId, [group('g1', 1), group('g2', 2, { name: 'Acme' }), group('g3', 2), group('g4', 3), { ...group('t1', 9), typeIndex: 1 }])
    await port.groupWriter.applyGroups(world.otherProjectId, [group('g9', 5)])
    const keys: string[] = []
    let after: { createdAtMicros: string; key: string } | undefined
    for (let i = 0; i < 5; i++) {
      const rows = await port.groups.list(projectId, { typeIndex: 0, limit: 2, after })
      keys.push(...rows.map((g) => g.key))
      if (rows.length < 2) break
      const last = rows[rows.length - 1]!
      after = { createdAtMicros: last.createdAtMicros, key: last.key }
    }
    assert.deepEqual(keys, ['g4', 'g3', 'g2', 'g1'])
    assert.deepEqual((await port.groups.list(projectId, { typeIndex: 0, limit: 10, search: 'acme' })).map((g) => g.key), ['g2'])
    assert.deepEqual((await port.groups.list(projectId, { typeIndex: 0, limit: 10, keyContains: 'G1' })).map((g) => g.key), ['g1'])
    const g2 = await port.groups.find(projectId, 0, 'g2')
    assert.deepEqual({ ...g2, createdAtMicros: undefined }, { typeIndex: 0, key: 'g2', properties: { name: 'Acme' }, createdAt: at(2), createdAtMicros: undefined })
    assert.equal(await port.groups.find(projectId, 1, 'g2'), null)
    assert.equal(await port.groups.find(world.otherProjectId, 0, 'g2'), null)
  })
  test(`${name} group store: findByKeys reads the asked groups of a type with their created_at in one call, each once, scoped to the project`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const { projectId } = world
    const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s, 123))
    const group = (key: string, s: number, typeIndex = 0, properties: Record<string, unknown> = {}) => ({ typeIndex, key, properties, createdAt: at(s), version: 0 })
    await port.groupWriter.applyGroups(projectId, [group('a', 1, 0, { name: 'A' }), group('b', 2), group('c', 3), group('x', 4, 1)])
    await port.groupWriter.applyGroups(world.otherProjectId, [group('d', 5)])
    const found = await port.groups.findByKeys(projectId, 0, ['c', 'a', 'missing', 'x', 'd', 'a'])
    assert.deepEqual(found.map((g) => ({ key: g.key, typeIndex: g.typeIndex, properties: g.properties, createdAt: g.createdAt })), [
      { key: 'c', typeIndex: 0, properties: {}, createdAt: at(3) },
      { key: 'a', typeIndex: 0, properties: { name: 'A' }, createdAt: at(1) },
    ])
    assert.deepEqual((await port.groups.findByKeys(projectId, 1, ['x', 'a'])).map((g) => g.key), ['x'])
    assert.deepEqual(await port.groups.findByKeys(projectId, 0, []), [])
    // Many keys in one statement (the actors query asks for a page of thousands).
    const many = Array.from({ length: 3000 }, (_, i) => `k${i}`)
    assert.deepEqual((await port.groups.findByKeys(projectId, 0, [...many, 'b'])).map((g) => g.key), ['b'])
  })
}
