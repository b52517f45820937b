import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { DashboardStore } from '../../src/modules/dashboards/dashboard-store.ts'
import { aDashboard, anInsight, apart, assertRefusedField, LONE_SURROGATE, TRICKY_JSON } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** What every DashboardStore adapter promises (dashboards, tiles, text cards). */
export function dashboardStoreContract(name: string, open: OpenInWorld<DashboardStore>): void {
  test(`${name} dashboards: insert and find round-trip every field; touch records the view`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const before = new Date()
    const id = await port.insert({ ...aDashboard({ name: 'Ops ☕', description: 'd', pinned: true, filters: { tricky: TRICKY_JSON }, tags: ['a'], restrictionLevel: 37 }), projectId: world.projectId, createdBy: world.userId, creationMode: 'template' })
    const d = await port.find(world.projectId, id)
    assert.ok(d)
    assert.equal(d.name, 'Ops ☕')
    assert.equal(d.description, 'd')
    assert.equal(d.pinned, true)
    assert.equal(d.creationMode, 'template')
    assert.deepEqual(d.filters, { tricky: TRICKY_JSON })
    assert.deepEqual(d.variables, {})
    assert.deepEqual(d.tags, ['a'])
    assert.equal(d.restrictionLevel, 37)
    assert.equal(d.createdBy?.id, world.userId)
    assert.ok(apart(d.createdAt, before) < 60_000)
    assert.equal(d.lastAccessedAt, null)
    await port.touch(id)
    const seen = (await port.find(world.projectId, id))!.lastAccessedAt
    assert.ok(seen && apart(seen, new Date()) < 60_000)
    assert.equal(await port.find(world.otherProjectId, id), null)
    const plain = await port.find(world.projectId, await port.insert({ projectId: world.projectId, createdBy: world.userId, creationMode: 'default' }))
    assert.deepEqual([plain?.name, plain?.description, plain?.pinned, plain?.restrictionLevel, plain?.tags], [null, '', false, 21, []])
  })

  test(`${name} dashboards: a NUL anywhere is refused naming the field; a lone surrogate is stored as U+FFFD`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const w = { projectId: world.projectId, createdBy: world.userId, creationMode: 'default' as const }
    await assertRefusedField(port.insert({ ...aDashboard({ name: '\u0000' }), ...w }), 'name')
    await assertRefusedField(port.insert({ ...aDashboard({ filters: { date_from: '\u0000' } }), ...w }), 'filters')
    const id = await port.insert({ ...aDashboard({ description: LONE_SURROGATE.written, tags: [LONE_SURROGATE.written] }), ...w })
    const d = (await port.find(world.projectId, id))!
    assert.deepEqual([d.description, d.tags], [LONE_SURROGATE.read, [LONE_SURROGATE.read]])
    await assertRefusedField(port.update(world.projectId, id, { description: '\u0000' }), 'description')
    await assertRefusedField(port.insertText({ projectId: world.projectId, body: '\u0000', createdBy: world.userId }), 'body')
    const text = await port.insertText({ projectId: world.projectId, body: 'ok', createdBy: world.userId })
    await assertRefusedField(port.updateText(text, 'x\u0000'), 'body')
    await assertRefusedField(port.insertTile({ dashboardId: id, textId: text, layouts: { sm: { i: '\u0000' } } }), 'layouts')
    const tile = await port.insertTile({ dashboardId: id, textId: text })
    await assertRefusedField(port.updateTile(tile, { filtersOverrides: { '\u0000': 1 } }), 'filters_overrides')
    assert.deepEqual(await port.find(world.projectId, id), d)
    assert.deepEqual((await port.tiles(id)).map((x) => [x.text?.body, x.filtersOverrides]), [['ok', null]])
  })

  test(`${name} dashboards: list counts live dashboards, pinned first then by name, and pages`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ins = (name: string, pinned = false, projectId = world.projectId, deleted = false) =>
      port.insert({ ...aDashboard({ name, pinned, deleted }), projectId, createdBy: world.userId, creationMode: 'default' })
    await ins('b')
    await ins('z', true)
    await ins('a')
    await ins('c', true)
    await ins('gone', false, world.projectId, true)
    await ins('theirs', false, world.otherProjectId)
    const all = await port.list(world.projectId, { limit: 10, offset: 0 })
    assert.equal(all.count, 4)
    assert.deepEqual(all.rows.map((r) => r.name), ['c', 'z', 'a', 'b'])
    const page = await port.list(world.projectId, { limit: 2, offset: 2 })
    assert.deepEqual([page.count, page.rows.map((r) => r.name)], [4, ['a', 'b']])
  })

  test(`${name} dashboards: update changes only the given fields; deleted ones are found only when asked`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const id = await port.insert({ ...aDashboard({ name: 'n', description: 'keep', tags: ['t'] }), projectId: world.projectId, createdBy: world.userId, creationMode: 'default' })
    await port.update(world.projectId, id, {})
    await port.update(world.projectId, id, { name: 'renamed', filters: { date_from: '-7d' } })
    const d = (await port.find(world.projectId, id))!
    assert.deepEqual([d.name, d.description, d.tags, d.filters], ['renamed', 'keep', ['t'], { date_from: '-7d' }])
    await port.update(world.otherProjectId, id, { name: 'stolen' })
    assert.equal((await port.find(world.projectId, id))?.name, 'renamed')
    await port.update(world.projectId, id, { deleted: true })
    assert.equal(await port.find(world.projectId, id), null)
    assert.equal((await port.find(world.projectId, id, { includeDeleted: true }))?.deleted, true)
  })

  test(`${name} dashboards: tiles hold an insight or a text card with their layouts; a deleted insight hides its tile`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const d = await port.insert({ ...aDashboard(), projectId: world.projectId, createdBy: world.userId, creationMode: 'default' })
    const insight = await port.insertInsight({ ...anInsight({ name: 'on tile' }), projectId: world.projectId, createdBy: world.userId })
    const text = await port.insertText({ projectId: world.projectId, body: '# Hello ☕', createdBy: world.userId })
    const layouts = { sm: { x: 0, y: 0, w: 6, h: 5 }, xs: { x: 0, y: 0, w: 1, h: 5 } }
    const t1 = await port.insertTile({ dashboardId: d, insightId: insight, layouts, color: 'blue', filtersOverrides: { tricky: TRICKY_JSON } })
    const t2 = await port.insertTile({ dashboardId: d, textId: text })
    const tiles = await port.tiles(d)
    assert.deepEqual(tiles.map((x) => x.id).sort((a, b) => a - b), [t1, t2])
    const a = tiles.find((x) => x.id === t1)!
    assert.equal(a.insight?.name, 'on tile')
    assert.deepEqual(a.insight?.placements, [{ tileId: t1, dashboardId: d }])
    assert.deepEqual(a.layouts, layouts)
    assert.equal(a.color, 'blue')
    assert.deepEqual(a.filtersOverrides, { tricky: TRICKY_JSON })
    assert.equal(a.text, null)
    const b = tiles.find((x) => x.id === t2)!
    assert.equal(b.text?.body, '# Hello ☕')
    assert.equal(b.text?.createdBy?.id, world.userId)
    assert.deepEqual([b.insight, b.layouts, b.color, b.filtersOverrides], [null, {}, null, null])
    await port.updateText(text, 'edited')
    await port.updateTile(t2, { color: null, layouts: { sm: { w: 2 } }, filtersOverrides: null })
    const edited = (await port.tiles(d)).find((x) => x.id === t2)!
    assert.deepEqual([edited.text?.body, edited.layouts, edited.color], ['edited', { sm: { w: 2 } }, null])
    await port.setInsightsDeleted([insight], true)
    assert.deepEqual((await port.tiles(d)).map((x) => x.id), [t2])
    await port.setInsightsDeleted([insight], false)
    await port.updateTile(t1, { deleted: true })
    assert.deepEqual((await port.tiles(d)).map((x) => x.id), [t2])
    assert.deepEqual(await port.findTile(d, t1), { id: t1, insightId: insight, textId: null, deleted: true })
  })

  test(`${name} dashboards: tiles move between dashboards and are found through their dashboard only`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const mk = () => port.insert({ ...aDashboard(), projectId: world.projectId, createdBy: world.userId, creationMode: 'default' })
    const [from, to] = [await mk(), await mk()]
    const insight = await port.insertInsight({ ...anInsight(), projectId: world.projectId, createdBy: null })
    const tile = await port.insertTile({ dashboardId: from, insightId: insight })
    assert.equal(await port.findTile(to, tile), null)
    await port.moveTile(tile, to)
    assert.equal(await port.findTile(from, tile), null)
    assert.equal((await port.findTile(to, tile))?.insightId, insight)
    assert.deepEqual((await port.tiles(to)).map((x) => x.id), [tile])
    assert.deepEqual(await port.tiles(from), [])
  })

  test(`${name} dashboards: insightsOn, insightsOnlyOn and deleting a dashboard's tiles`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const mk = () => port.insert({ ...aDashboard(), projectId: world.projectId, createdBy: world.userId, creationMode: 'default' })
    const [main, other] = [await mk(), await mk()]
    const ins = () => port.insertInsight({ ...anInsight(), projectId: world.projectId, createdBy: world.userId })
    const [only, shared, sharedDeadElsewhere] = [await ins(), await ins(), await ins()]
    await port.insertTile({ dashboardId: main, insightId: only })
    await port.insertTile({ dashboardId: main, insightId: shared })
    await port.insertTile({ dashboardId: main, insightId: sharedDeadElsewhere })
    await port.insertTile({ dashboardId: other, insightId: shared })
    const dead = await port.insertTile({ dashboardId: other, insightId: sharedDeadElsewhere })
    await port.updateTile(dead, { deleted: true })
    await port.insertTile({ dashboardId: main, textId: await port.insertText({ projectId: world.projectId, body: 'x', createdBy: world.userId }) })
    const sort = (xs: number[]) => [...xs].sort((a, b) => a - b)
    assert.deepEqual(sort(await port.insightsOn(main)), sort([only, shared, sharedDeadElsewhere]))
    assert.deepEqual(sort(await port.insightsOnlyOn(main)), sort([only, sharedDeadElsewhere]))
    await port.setTilesDeleted(main, true)
    assert.deepEqual(await port.tiles(main), [])
    assert.deepEqual(sort(await port.insightsOn(main)), sort([only, shared, sharedDeadElsewhere]), 'deleted tiles still count')
    await port.setTilesDeleted(main, false)
    assert.equal((await port.tiles(main)).length, 4)
    await port.setInsightsDeleted([], true)
  })

  test(`${name} dashboards: memberLevel reads the user's level in the project`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    assert.equal(await port.memberLevel(world.projectId, world.userId), 15)
    // A project created later takes the organization level of its members (PostHog's rule): the owner's 15.
    assert.equal(await port.memberLevel(world.otherProjectId, world.userId), 15)
    assert.equal(await port.memberLevel(world.projectId, world.otherUserId), null)
  })

  test(`${name} dashboards: a transaction that throws writes nothing`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await assert.rejects(
      port.inTransaction(async (tx) => {
        const d = await tx.insert({ ...aDashboard(), projectId: world.projectId, createdBy: world.userId, creationMode: 'duplicate' })
        await tx.insertTile({ dashboardId: d, insightId: await tx.insertInsight({ ...anInsight(), projectId: world.projectId, createdBy: null }) })
        throw new Error('abort')
      }),
      /abort/,
    )
    assert.equal((await port.list(world.projectId, { limit: 10, offset: 0 })).count, 0)
  })
}
