import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { DashboardStore } from '../../src/modules/dashboards/dashboard-store.ts'
import type { InsightStore } from '../../src/modules/insights/insight-store.ts'
import { aDashboard, anInsight, apart, assertRefusedField, LONE_SURROGATE, TRICKY_JSON } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** The insight store, with the dashboard store that makes dashboards to place insights on. */
export interface InsightPorts {
  insights: InsightStore
  dashboards: DashboardStore
}

/** What every InsightStore adapter promises. */
export function insightStoreContract(name: string, open: OpenInWorld<InsightPorts>): void {
  const dashboard = (p: InsightPorts, projectId: number, userId: number, deleted = false) =>
    p.dashboards.insert({ ...aDashboard({ deleted }), projectId, createdBy: userId, creationMode: 'default' })

  test(`${name} insights: insert and find round-trip every field, query JSON exactly`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const before = new Date()
    const query = { kind: 'DataVisualizationNode', source: TRICKY_JSON }
    const id = await port.insights.insert({ ...anInsight({ name: 'Ünique', description: 'd', query, filters: { tricky: TRICKY_JSON } }), projectId: world.projectId, createdBy: world.userId })
    const i = await port.insights.find(world.projectId, id)
    assert.ok(i)
    assert.match(i.shortId, /^[A-Za-z0-9]{8}$/)
    assert.equal(i.name, 'Ünique')
    assert.equal(i.description, 'd')
    assert.deepEqual(i.query, query)
    assert.deepEqual(i.filters, { tricky: TRICKY_JSON })
    assert.equal(i.deleted, false)
    assert.equal(i.createdBy?.id, world.userId)
    assert.deepEqual(i.placements, [])
    assert.ok(apart(i.createdAt, before) < 60_000)
    assert.equal(await port.insights.find(world.otherProjectId, id), null)
    const anonymous = await port.insights.insert({ ...anInsight({ query: null, name: null }), projectId: world.projectId, createdBy: null })
    const read = await port.insights.find(world.projectId, anonymous)
    assert.equal(read?.createdBy, null)
    assert.equal(read?.query, null)
    assert.equal(read?.name, null)
  })

  test(`${name} insights: a NUL anywhere is refused naming the field; a lone surrogate is stored as U+FFFD`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const w = { projectId: world.projectId, createdBy: world.userId }
    await assertRefusedField(port.insights.insert({ ...anInsight({ query: { kind: 'x', series: [{ event: '\u0000' }] } }), ...w }), 'query')
    const id = await port.insights.insert({ ...anInsight({ query: { kind: LONE_SURROGATE.written } }), ...w })
    assert.deepEqual((await port.insights.find(world.projectId, id))?.query, { kind: LONE_SURROGATE.read })
    await assertRefusedField(port.insights.update(world.projectId, id, { name: '\u0000' }), 'name')
    await assertRefusedField(port.dashboards.insertInsight({ ...anInsight({ filters: { '\u0000': 1 } }), ...w }), 'filters')
    assert.equal((await port.insights.list(world.projectId, { limit: 10, offset: 0 })).count, 1)
  })

  test(`${name} insights: list counts live insights, most recently modified first, and pages`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ins = (name: string, projectId = world.projectId, deleted = false) =>
      port.insights.insert({ ...anInsight({ name, deleted }), projectId, createdBy: world.userId })
    const one = await ins('one')
    await ins('two')
    await ins('three')
    await ins('gone', world.projectId, true)
    await ins('theirs', world.otherProjectId)
    await port.insights.update(world.projectId, one, { description: 'touched' })
    const all = await port.insights.list(world.projectId, { limit: 10, offset: 0 })
    assert.equal(all.count, 3)
    assert.deepEqual(all.rows.map((r) => r.name), ['one', 'three', 'two'])
    const page = await port.insights.list(world.projectId, { limit: 1, offset: 1 })
    assert.deepEqual([page.count, page.rows.map((r) => r.name)], [3, ['three']])
  })

  test(`${name} insights: update changes only the given fields; deleted ones are found only when asked`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const id = await port.insights.insert({ ...anInsight({ name: 'n', description: 'keep' }), projectId: world.projectId, createdBy: world.userId })
    const before = (await port.insights.find(world.projectId, id))!
    await port.insights.update(world.projectId, id, { name: 'renamed', query: null })
    const after = (await port.insights.find(world.projectId, id))!
    assert.equal(after.name, 'renamed')
    assert.equal(after.description, 'keep')
    assert.equal(after.query, null)
    assert.ok(after.updatedAt.getTime() >= before.updatedAt.getTime())
    await port.insights.update(world.projectId, id, { deleted: true })
    assert.equal(await port.insights.find(world.projectId, id), null)
    assert.equal((await port.insights.find(world.projectId, id, { includeDeleted: true }))?.deleted, true)
    await port.insights.update(world.otherProjectId, id, { deleted: false })
    assert.equal(await port.insights.find(world.projectId, id), null)
  })

  test(`${name} insights: findDashboards answers for the project's dashboards only`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const live = await dashboard(port, world.projectId, world.userId)
    const dead = await dashboard(port, world.projectId, world.userId, true)
    const theirs = await dashboard(port, world.otherProjectId, world.userId)
    const found = await port.insights.findDashboards(world.projectId, [live, dead, theirs, 99_999])
    assert.deepEqual([...found].sort((a, b) => a.id - b.id), [{ id: live, deleted: false }, { id: dead, deleted: true }])
    assert.deepEqual(await port.insights.findDashboards(world.projectId, []), [])
  })

  test(`${name} insights: setDashboards places the insight on exactly those dashboards, reusing tiles`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const [d1, d2, d3] = [await dashboard(port, world.projectId, world.userId), await dashboard(port, world.projectId, world.userId), await dashboard(port, world.projectId, world.userId)]
    const id = await port.insights.insert({ ...anInsight(), projectId: world.projectId, createdBy: world.userId })
    const placed = async () => (await port.insights.find(world.projectId, id))!.placements
    await port.insights.setDashboards(id, [d1!, d2!])
    const first = await placed()
    assert.deepEqual(first.map((p) => p.dashboardId), [d1, d2])
    await port.insights.setDashboards(id, [d2!, d3!])
    assert.deepEqual((await placed()).map((p) => p.dashboardId), [d2, d3])
    await port.insights.setDashboards(id, [d1!, d2!, d3!])
    const again = await placed()
    assert.equal(again.find((p) => p.dashboardId === d1)?.tileId, first[0]!.tileId, 'the tile on d1 comes back, not a second one')
    await port.dashboards.update(world.projectId, d3!, { deleted: true })
    assert.deepEqual((await placed()).map((p) => p.dashboardId), [d1, d2])
    await port.insights.setDashboards(id, [])
    assert.deepEqual(await placed(), [])
  })

  test(`${name} insights: a transaction that throws writes nothing`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const d = await dashboard(port, world.projectId, world.userId)
    await assert.rejects(
      port.insights.inTransaction(async (tx) => {
        const id = await tx.insert({ ...anInsight(), projectId: world.projectId, createdBy: world.userId })
        await tx.setDashboards(id, [d])
        throw new Error('abort')
      }),
      /abort/,
    )
    assert.equal((await port.insights.list(world.projectId, { limit: 10, offset: 0 })).count, 0)
    assert.deepEqual(await port.dashboards.tiles(d), [])
  })

  test(`${name} insights: a saved result round-trips (keyed, timed), another project's insight is untouched, a new query drops it`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const id = await port.insights.insert({ ...anInsight({ query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery' } } }), projectId: world.projectId, createdBy: world.userId })
    assert.equal((await port.insights.find(world.projectId, id))?.cache, null)
    const computedAt = new Date('2024-06-01T12:00:00.123Z')
    const response = { results: [{ data: [1, 2], label: TRICKY_JSON }], timezone: 'UTC' }
    await port.insights.saveResult(world.otherProjectId, id, { key: 'cache_other', response: {}, computedAt })
    assert.equal((await port.insights.find(world.projectId, id))?.cache, null, 'the project scopes the write')
    await port.insights.saveResult(world.projectId, id, { key: 'cache_1', response, computedAt })
    const cached = (await port.insights.find(world.projectId, id))?.cache
    assert.deepEqual(cached, { key: 'cache_1', response, computedAt })
    await port.insights.update(world.projectId, id, { name: 'renamed' })
    assert.equal((await port.insights.find(world.projectId, id))?.cache?.key, 'cache_1', 'other fields keep the result')
    await port.insights.update(world.projectId, id, { query: { kind: 'InsightVizNode', source: { kind: 'LifecycleQuery' } } })
    assert.equal((await port.insights.find(world.projectId, id))?.cache, null)
  })
}
