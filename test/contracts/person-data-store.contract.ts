import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CohortStore } from '../../src/modules/cohorts/cohort-store.ts'
import type { PersonDataReader, PersonDataWriter } from '../../src/modules/persons/person-data-store.ts'
import { aCohort, TRICKY_JSON } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The person data store, with the cohort store that makes static cohorts to belong to. */
export interface PersonPorts {
  persons: PersonDataReader & PersonDataWriter
  cohorts: CohortStore
}

/** What every person data adapter promises (the reads /decide makes, the minimal writes). */
export function personDataStoreContract(name: string, open: OpenInWorld<PersonPorts>): void {
  test(`${name} persons: upsertPersons creates persons whose properties round-trip exactly, then replaces them`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = port.persons
    await p.upsertPersons(world.projectId, [
      { distinctId: 'alice', properties: TRICKY_JSON },
      { distinctId: 'bob ☕', properties: { plan: 'free' } },
    ])
    const found = await p.getPersons(world.projectId, ['alice', 'bob ☕', 'nobody'])
    assert.deepEqual([...found.keys()].sort(), ['alice', 'bob ☕'])
    assert.deepEqual(found.get('alice')!.properties, TRICKY_JSON)
    assert.deepEqual(found.get('alice')!.staticCohortIds, [])
    await p.upsertPersons(world.projectId, [{ distinctId: 'alice', properties: { plan: 'paid' } }])
    const again = await p.getPersons(world.projectId, ['alice'])
    assert.deepEqual(again.get('alice')!.properties, { plan: 'paid' })
    assert.equal(again.get('alice')!.personId, found.get('alice')!.personId)
  })

  test(`${name} persons: a NUL character in a property is kept as U+FFFD (as PostHog stores it), not a failed write`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.persons.upsertPersons(world.projectId, [{ distinctId: 'nul', properties: { 'k\u0000': 'a\u0000b', nested: ['\u0000'] } }])
    const got = await port.persons.getPersons(world.projectId, ['nul'])
    assert.deepEqual(got.get('nul')!.properties, { 'k\uFFFD': 'a\uFFFDb', nested: ['\uFFFD'] })
    await port.persons.upsertGroups(world.projectId, [{ groupTypeIndex: 0, groupKey: 'g', properties: { x: '\u0000' } }])
    const groups = await port.persons.getGroups(world.projectId, [{ groupTypeIndex: 0, groupKey: 'g' }])
    assert.deepEqual(groups.get('0:g'), { x: '\uFFFD' })
  })

  test(`${name} persons: a distinct id with NUL or a lone surrogate is stored (as U+FFFD) and found again by the same id`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const odd = ['nul\u0000id', 'lone\ud800']
    const ids = await port.persons.ensurePersons(world.projectId, odd)
    assert.deepEqual([...ids.keys()].sort(), [...odd].sort())
    await port.persons.upsertPersons(world.projectId, [{ distinctId: odd[0]!, properties: { ok: 1 } }])
    const got = await port.persons.getPersons(world.projectId, [...odd, 'absent\u0000'])
    assert.deepEqual(got.get(odd[0]!), { personId: ids.get(odd[0]!), properties: { ok: 1 }, staticCohortIds: [] })
    assert.equal(got.get(odd[1]!)?.personId, ids.get(odd[1]!))
    assert.equal(got.has('absent\u0000'), false)
    await port.persons.writeHashKeyOverrides({ projectId: world.projectId, distinctIds: odd, flagKeys: ['f\u0000'], hashKey: 'h\u0000' })
    assert.equal((await port.persons.getHashKeyOverrides(world.projectId, odd)).length, 2)
  })

  test(`${name} persons: the same distinct id twice in one upsert makes one person, with the last properties`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.persons.upsertPersons(world.projectId, [
      { distinctId: 'twice', properties: { n: 1 } },
      { distinctId: 'twice', properties: { n: 2 } },
    ])
    const page = await port.persons.scanPersons(world.projectId, { beforePersonId: null, limit: 10, withCohorts: false })
    assert.deepEqual(page.persons.map((p) => [p.distinctId, p.person.properties]), [['twice', { n: 2 }]])
  })

  test(`${name} persons: distinct ids are per project`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.persons.upsertPersons(world.projectId, [{ distinctId: 'same', properties: { project: 'mine' } }])
    await port.persons.upsertPersons(world.otherProjectId, [{ distinctId: 'same', properties: { project: 'other' } }])
    const mine = (await port.persons.getPersons(world.projectId, ['same'])).get('same')!
    const theirs = (await port.persons.getPersons(world.otherProjectId, ['same'])).get('same')!
    assert.deepEqual(mine.properties, { project: 'mine' })
    assert.deepEqual(theirs.properties, { project: 'other' })
    assert.notEqual(mine.personId, theirs.personId)
  })

  test(`${name} persons: ensurePersons returns one id per distinct id, creating only the unknown ones`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.persons.upsertPersons(world.projectId, [{ distinctId: 'known', properties: { keep: true } }])
    const known = (await port.persons.getPersons(world.projectId, ['known'])).get('known')!.personId
    const ids = await port.persons.ensurePersons(world.projectId, ['known', 'new1', 'new2', 'new1'])
    assert.equal(ids.size, 3)
    assert.equal(ids.get('known'), known)
    assert.equal(new Set(ids.values()).size, 3)
    assert.deepEqual((await port.persons.getPersons(world.projectId, ['known'])).get('known')!.properties, { keep: true })
    assert.deepEqual((await port.persons.getPersons(world.projectId, ['new1'])).get('new1')!.properties, {})
    assert.deepEqual(await port.persons.ensurePersons(world.projectId, ['new1']), new Map([['new1', ids.get('new1')]]))
  })

  test(`${name} persons: concurrent ensurePersons and upserts agree on one person per distinct id`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ids = ['c1', 'c2', 'c3', 'c4']
    const maps = await Promise.all([
      port.persons.ensurePersons(world.projectId, ids),
      port.persons.ensurePersons(world.projectId, [...ids].reverse()),
      port.persons.ensurePersons(world.projectId, ids.slice(1)),
    ])
    for (const id of ids.slice(1)) assert.equal(new Set(maps.map((m) => m.get(id))).size, 1, id)
    await Promise.all(ids.map((id, i) => port.persons.upsertPersons(world.projectId, [{ distinctId: id, properties: { i } }])))
    const got = await port.persons.getPersons(world.projectId, ids)
    for (const [i, id] of ids.entries()) assert.deepEqual([got.get(id)?.personId, got.get(id)?.properties], [maps[0]!.get(id), { i }])
  })

  test(`${name} persons: findPersonIdsByUuid skips unknown and malformed uuids instead of failing`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.persons.ensurePersons(world.projectId, ['x'])
    const malformed = ['not-a-uuid', '-'.repeat(36), 'gggggggg-gggg-gggg-gggg-gggggggggggg', '', '00000000-0000-0000-0000-000000000000']
    assert.deepEqual(await port.persons.findPersonIdsByUuid(world.projectId, malformed), [])
    assert.deepEqual(await port.persons.findPersonIdsByUuid(world.projectId, []), [])
  })

  test(`${name} persons: static cohort ids are read with withCohorts only`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ids = await port.persons.ensurePersons(world.projectId, ['member', 'outsider'])
    const c1 = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ isStatic: true, filters: null }) })
    const c2 = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ isStatic: true, filters: null }) })
    await port.cohorts.addMembers(c1.id, [ids.get('member')!])
    await port.cohorts.addMembers(c2.id, [ids.get('member')!])
    const withCohorts = await port.persons.getPersons(world.projectId, ['member', 'outsider'], { withCohorts: true })
    assert.deepEqual([...withCohorts.get('member')!.staticCohortIds].sort((a, b) => a - b), [c1.id, c2.id])
    assert.deepEqual(withCohorts.get('outsider')!.staticCohortIds, [])
    assert.deepEqual((await port.persons.getPersons(world.projectId, ['member'])).get('member')!.staticCohortIds, [])
  })

  test(`${name} persons: scanPersons pages through the project's persons, newest first, and ends`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    for (let i = 0; i < 5; i++) {
      await port.persons.upsertPersons(world.projectId, [{ distinctId: `p${i}`, properties: { i } }])
      await port.persons.upsertPersons(world.otherProjectId, [{ distinctId: `other${i}`, properties: {} }])
    }
    const seen: string[] = []
    let cursor: number | null = null
    for (let pages = 0; pages < 20; pages++) {
      const page = await port.persons.scanPersons(world.projectId, { beforePersonId: cursor, limit: 3, withCohorts: false })
      seen.push(...page.persons.map((p) => p.distinctId))
      for (const p of page.persons) assert.deepEqual(p.person.properties, { i: Number(p.distinctId.slice(1)) })
      if (page.next === null) break
      assert.ok(cursor === null || page.next < cursor)
      cursor = page.next
    }
    assert.deepEqual(seen, ['p4', 'p3', 'p2', 'p1', 'p0'])
  })

  test(`${name} persons: groups are upserted and read by type index and key, per project`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = port.persons
    await p.upsertGroups(world.projectId, [
      { groupTypeIndex: 0, groupKey: 'acme', properties: TRICKY_JSON },
      { groupTypeIndex: 1, groupKey: 'acme', properties: { team: true } },
    ])
    await p.upsertGroups(world.projectId, [{ groupTypeIndex: 1, groupKey: 'acme', properties: { team: false } }])
    await p.upsertGroups(world.otherProjectId, [{ groupTypeIndex: 0, groupKey: 'acme', properties: { other: 1 } }])
    const got = await p.getGroups(world.projectId, [
      { groupTypeIndex: 0, groupKey: 'acme' },
      { groupTypeIndex: 1, groupKey: 'acme' },
      { groupTypeIndex: 2, groupKey: 'acme' },
    ])
    assert.deepEqual(got, new Map<string, unknown>([['0:acme', TRICKY_JSON], ['1:acme', { team: false }]]))
    assert.deepEqual(await p.getGroups(world.projectId, []), new Map())
  })

  test(`${name} persons: the same group twice in one upsert keeps the last properties`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.persons.upsertGroups(world.projectId, [
      { groupTypeIndex: 0, groupKey: 'twice', properties: { n: 1 } },
      { groupTypeIndex: 0, groupKey: 'twice', properties: { n: 2 } },
    ])
    assert.deepEqual(await port.persons.getGroups(world.projectId, [{ groupTypeIndex: 0, groupKey: 'twice' }]), new Map([['0:twice', { n: 2 }]]))
  })

  test(`${name} persons: hash key overrides are written once per person and flag; the first writer wins`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const p = port.persons
    await p.ensurePersons(world.projectId, ['anon', 'known'])
    await p.writeHashKeyOverrides({ projectId: world.projectId, distinctIds: ['anon', 'ghost'], flagKeys: ['f1', 'f2'], hashKey: 'h1' })
    await p.writeHashKeyOverrides({ projectId: world.projectId, distinctIds: ['anon', 'known'], flagKeys: ['f1'], hashKey: 'h2' })
    const rows = await p.getHashKeyOverrides(world.projectId, ['anon', 'known', 'ghost'])
    const sorted = rows.map((r) => `${r.distinctId}/${r.flagKey}/${r.hashKey}`).sort()
    assert.deepEqual(sorted, ['anon/f1/h1', 'anon/f2/h1', 'known/f1/h2'])
    assert.deepEqual(await p.getHashKeyOverrides(world.otherProjectId, ['anon']), [])
  })
}
