import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CohortStore } from '../../src/modules/cohorts/cohort-store.ts'
import type { PersonDataWriter } from '../../src/modules/persons/person-data-store.ts'
import { aCohort, apart, assertRefusedField, LONE_SURROGATE, TRICKY_JSON } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The cohort store, with the person writer that makes the members of static cohorts. */
export interface CohortPorts {
  cohorts: CohortStore
  persons: PersonDataWriter
}

/** What every CohortStore adapter promises. */
export function cohortStoreContract(name: string, open: OpenInWorld<CohortPorts>): void {
  test(`${name} cohorts: insert stores version 1 and reads back every field`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const before = new Date()
    const write = aCohort({ name: 'Power users', description: TRICKY_JSON.text, groups: [{ properties: [TRICKY_JSON] }] })
    const cohort = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: write })
    assert.equal(cohort.version, 1)
    assert.equal(cohort.name, 'Power users')
    assert.equal(cohort.description, TRICKY_JSON.text)
    assert.deepEqual(cohort.filters, write.filters)
    assert.deepEqual(cohort.groups, write.groups)
    assert.equal(cohort.isStatic, false)
    assert.equal(cohort.count, null)
    assert.equal(cohort.createdBy?.id, world.userId)
    assert.ok(apart(cohort.createdAt, before) < 60_000)
    assert.ok(cohort.lastCalculation && apart(cohort.lastCalculation, before) < 60_000)
    assert.deepEqual(await port.cohorts.get(world.projectId, cohort.id), cohort)
  })

  test(`${name} cohorts: null filters stay null`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const cohort = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ filters: null, isStatic: true }) })
    assert.equal((await port.cohorts.get(world.projectId, cohort.id))?.filters, null)
  })

  test(`${name} cohorts: a NUL anywhere is refused naming the field; a lone surrogate is stored as U+FFFD`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const w = { projectId: world.projectId, userId: world.userId }
    await assertRefusedField(port.cohorts.insert({ ...w, cohort: aCohort({ description: '\u0000' }) }), 'description')
    await assertRefusedField(port.cohorts.insert({ ...w, cohort: aCohort({ groups: [{ properties: [{ key: 'email', value: 'a\u0000' }] }] }) }), 'groups')
    const c = await port.cohorts.insert({ ...w, cohort: aCohort({ name: LONE_SURROGATE.written, groups: [LONE_SURROGATE.written] }) })
    assert.deepEqual([c.name, c.groups], [LONE_SURROGATE.read, [LONE_SURROGATE.read]])
    await assertRefusedField(port.cohorts.update({ projectId: world.projectId, id: c.id, cohort: aCohort({ name: 'x\u0000' }) }), 'name')
    assert.deepEqual(await port.cohorts.get(world.projectId, c.id), c)
  })

  test(`${name} cohorts: listLive is newest first, without deleted cohorts or other projects' cohorts`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ins = (n: string, projectId = world.projectId, deleted = false) =>
      port.cohorts.insert({ projectId, userId: world.userId, cohort: aCohort({ name: n, deleted }) })
    await ins('one')
    await ins('two')
    await ins('dead', world.projectId, true)
    await ins('theirs', world.otherProjectId)
    assert.deepEqual((await port.cohorts.listLive(world.projectId)).map((c) => c.name), ['two', 'one'])
    assert.deepEqual((await port.cohorts.listLive(world.otherProjectId)).map((c) => c.name), ['theirs'])
  })

  test(`${name} cohorts: list pages the live cohorts, newest first, with their count`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    for (const n of ['one', 'two', 'three']) await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ name: n }) })
    await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ name: 'dead', deleted: true }) })
    await port.cohorts.insert({ projectId: world.otherProjectId, userId: world.userId, cohort: aCohort({ name: 'theirs' }) })
    const page = await port.cohorts.list(world.projectId, { limit: 2, offset: 1 })
    assert.deepEqual([page.count, page.rows.map((c) => c.name)], [3, ['two', 'one']])
    assert.deepEqual((await port.cohorts.list(world.projectId, { limit: 2, offset: 3 })).rows, [])
  })

  test(`${name} cohorts: get is project-scoped and finds deleted cohorts`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const c = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ deleted: true }) })
    assert.equal((await port.cohorts.get(world.projectId, c.id))?.deleted, true)
    assert.equal(await port.cohorts.get(world.otherProjectId, c.id), null)
  })

  test(`${name} cohorts: update replaces the writable fields and bumps version; another project's update changes nothing`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const c = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ name: 'before' }) })
    const write = aCohort({ name: 'after', description: 'd', groups: [{ days: 7 }], deleted: true })
    const updated = await port.cohorts.update({ projectId: world.projectId, id: c.id, cohort: write })
    assert.equal(updated.version, 2)
    assert.equal(updated.name, 'after')
    assert.equal(updated.description, 'd')
    assert.deepEqual(updated.groups, [{ days: 7 }])
    assert.equal(updated.deleted, true)
    await port.cohorts.update({ projectId: world.otherProjectId, id: c.id, cohort: aCohort({ name: 'stolen' }) }).catch(() => null)
    assert.equal((await port.cohorts.get(world.projectId, c.id))?.name, 'after')
  })

  test(`${name} cohorts: addMembers counts each person once, ignores repeats and empty lists`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const c = await port.cohorts.insert({ projectId: world.projectId, userId: world.userId, cohort: aCohort({ isStatic: true, filters: null }) })
    assert.equal(c.count, 0)
    const ids = [...(await port.persons.ensurePersons(world.projectId, ['a', 'b', 'c'])).values()]
    await port.cohorts.addMembers(c.id, ids.slice(0, 2))
    await port.cohorts.addMembers(c.id, ids)
    await port.cohorts.addMembers(c.id, [ids[0]!, ids[0]!])
    await port.cohorts.addMembers(c.id, [])
    assert.equal((await port.cohorts.get(world.projectId, c.id))?.count, 3)
  })
}
