import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ActionStore } from '../../src/modules/actions/action-store.ts'
import { anAction, apart, assertRefusedField, aStep, LONE_SURROGATE, TRICKY_JSON } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** What every ActionStore adapter promises. */
export function actionStoreContract(name: string, open: OpenInWorld<ActionStore>): void {
  test(`${name} actions: insert and find round-trip every field, steps and tags exactly`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const steps = [aStep({ properties: [{ key: 'k', value: TRICKY_JSON, operator: 'exact', type: 'event' }], text: TRICKY_JSON.text }), aStep({ event: null })]
    const calc = new Date('2025-03-30T01:30:00.123Z') // inside a daylight-saving change in Europe
    const before = new Date()
    const id = await port.insert({ ...anAction({ name: 'Signed up', description: 'd ☕', tags: ['x', 'ÿ'], steps, postToChat: true, chatMessageFormat: '[action.name]', lastCalculatedAt: calc }), projectId: world.projectId, createdBy: world.userId })
    const a = await port.find(world.projectId, id)
    assert.ok(a)
    assert.equal(a.name, 'Signed up')
    assert.equal(a.description, 'd ☕')
    assert.deepEqual(a.tags, ['x', 'ÿ'])
    assert.deepEqual(a.steps, steps)
    assert.equal(a.postToChat, true)
    assert.equal(a.chatMessageFormat, '[action.name]')
    assert.equal(a.deleted, false)
    assert.equal(a.lastCalculatedAt.toISOString(), calc.toISOString())
    assert.equal(a.pinnedAt, null)
    assert.equal(a.createdBy?.id, world.userId)
    assert.ok(apart(a.createdAt, before) < 60_000)
    assert.equal(await port.find(world.otherProjectId, id), null)
  })

  test(`${name} actions: a NUL anywhere is refused naming the field; a lone surrogate is stored as U+FFFD`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const w = { projectId: world.projectId, createdBy: world.userId }
    await assertRefusedField(port.insert({ ...anAction({ name: 'a\u0000' }), ...w }), 'name')
    await assertRefusedField(port.insert({ ...anAction({ steps: [aStep({ url: '\u0000' })] }), ...w }), 'steps')
    const id = await port.insert({ ...anAction({ description: LONE_SURROGATE.written, steps: [aStep({ text: LONE_SURROGATE.written })] }), ...w })
    const a = (await port.find(world.projectId, id))!
    assert.deepEqual([a.description, a.steps[0]!.text], [LONE_SURROGATE.read, LONE_SURROGATE.read])
    await assertRefusedField(port.update(world.projectId, id, { tags: ['\u0000'] }), 'tags')
    assert.deepEqual(await port.find(world.projectId, id), a)
    assert.equal(await port.findLiveByName(world.projectId, 'a\u0000'), null)
  })

  test(`${name} actions: list counts live actions, most recently calculated first then by name, and pages`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const at = (iso: string) => new Date(iso)
    const ins = (name: string, lastCalculatedAt: Date, projectId = world.projectId, deleted = false) =>
      port.insert({ ...anAction({ name, lastCalculatedAt, deleted }), projectId, createdBy: world.userId })
    await ins('b', at('2026-01-01T00:00:00Z'))
    await ins('a', at('2026-01-01T00:00:00Z'))
    await ins('new', at('2026-02-01T00:00:00Z'))
    await ins('old', at('2025-01-01T00:00:00Z'))
    await ins('gone', at('2026-03-01T00:00:00Z'), world.projectId, true)
    await ins('theirs', at('2026-03-01T00:00:00Z'), world.otherProjectId)
    const all = await port.list(world.projectId, { limit: 100, offset: 0 })
    assert.equal(all.count, 4)
    assert.deepEqual(all.rows.map((r) => r.name), ['new', 'a', 'b', 'old'])
    const page = await port.list(world.projectId, { limit: 2, offset: 1 })
    assert.equal(page.count, 4)
    assert.deepEqual(page.rows.map((r) => r.name), ['a', 'b'])
    assert.deepEqual((await port.list(world.projectId, { limit: 2, offset: 10 })).rows, [])
  })

  test(`${name} actions: findLiveByName ignores deleted actions, other projects and exceptId`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const id = await port.insert({ ...anAction({ name: 'dup' }), projectId: world.projectId, createdBy: world.userId })
    await port.insert({ ...anAction({ name: 'dead', deleted: true }), projectId: world.projectId, createdBy: world.userId })
    assert.equal(await port.findLiveByName(world.projectId, 'dup'), id)
    assert.equal(await port.findLiveByName(world.projectId, 'dup', id), null)
    assert.equal(await port.findLiveByName(world.projectId, 'dead'), null)
    assert.equal(await port.findLiveByName(world.otherProjectId, 'dup'), null)
  })

  test(`${name} actions: update changes only the given fields; pinning keeps the first pin; other projects are untouched`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const id = await port.insert({ ...anAction({ name: 'p', description: 'keep', tags: ['t'] }), projectId: world.projectId, createdBy: world.userId })
    await port.update(world.projectId, id, { name: 'renamed', pinnedAt: new Date() })
    const pinned = await port.find(world.projectId, id)
    assert.equal(pinned?.name, 'renamed')
    assert.equal(pinned?.description, 'keep')
    assert.deepEqual(pinned?.tags, ['t'])
    assert.ok(pinned?.pinnedAt instanceof Date)
    await port.update(world.projectId, id, { pinnedAt: new Date(Date.now() + 86_400_000) })
    assert.equal((await port.find(world.projectId, id))?.pinnedAt?.getTime(), pinned!.pinnedAt!.getTime())
    await port.update(world.projectId, id, { pinnedAt: null, deleted: true, steps: [] })
    const after = await port.find(world.projectId, id)
    assert.equal(after?.pinnedAt, null)
    assert.equal(after?.deleted, true)
    assert.deepEqual(after?.steps, [])
    await port.update(world.otherProjectId, id, { name: 'stolen' })
    assert.equal((await port.find(world.projectId, id))?.name, 'renamed')
  })

  test(`${name} actions: concurrent check-then-insert transactions never leave two live actions with one name`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const create = () =>
      port.inTransaction(async (tx) => {
        if ((await tx.findLiveByName(world.projectId, 'race')) !== null) return null
        await new Promise((resolve) => setTimeout(resolve, 20)) // widens the window between check and insert
        return tx.insert({ ...anAction({ name: 'race' }), projectId: world.projectId, createdBy: world.userId })
      })
    const made = await Promise.all([create(), create(), create(), create()])
    assert.equal(made.filter((id) => id !== null).length, 1)
    assert.equal((await port.list(world.projectId, { limit: 10, offset: 0 })).count, 1)
  })

  test(`${name} actions: a transaction that throws writes nothing`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await assert.rejects(
      port.inTransaction(async (tx) => {
        await tx.insert({ ...anAction({ name: 'rolled back' }), projectId: world.projectId, createdBy: world.userId })
        throw new Error('abort')
      }),
      /abort/,
    )
    assert.equal((await port.list(world.projectId, { limit: 10, offset: 0 })).count, 0)
    const id = await port.inTransaction((tx) => tx.insert({ ...anAction({ name: 'kept' }), projectId: world.projectId, createdBy: world.userId }))
    assert.equal((await port.find(world.projectId, id))?.name, 'kept')
  })
}
