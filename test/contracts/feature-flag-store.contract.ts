import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FeatureFlagStore } from '../../src/modules/feature-flags/feature-flag-store.ts'
import type { AppError } from '../../src/shared/errors.ts'
import { aFlag, apart, assertRefusedField, LONE_SURROGATE, rejection, TRICKY_JSON } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** A write refused because a live flag of the project has the key: the service's 400 `unique` on `key`. */
async function assertTaken(write: Promise<unknown>): Promise<void> {
  await assertRefusedField(write, 'key')
  const err = await rejection(write)
  assert.equal((err as AppError).extra?.subCode, 'unique')
}

/** What every FeatureFlagStore adapter promises. */
export function featureFlagStoreContract(name: string, open: OpenInWorld<FeatureFlagStore>): void {
  test(`${name} flags: insert stores version 1 and reads back every field, creator included`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const before = new Date()
    const flag = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'beta', name: 'Beta', tags: ['a', 'b'] }) })
    assert.equal(flag.key, 'beta')
    assert.equal(flag.name, 'Beta')
    assert.equal(flag.version, 1)
    assert.equal(flag.projectId, world.projectId)
    assert.deepEqual(flag.tags, ['a', 'b'])
    assert.equal(flag.active, true)
    assert.equal(flag.deleted, false)
    assert.equal(flag.evaluationRuntime, 'all')
    assert.equal(flag.createdBy?.id, world.userId)
    assert.equal(flag.createdBy?.email, 'owner@example.com')
    assert.equal(flag.lastModifiedBy?.id, world.userId)
    assert.ok(flag.createdAt instanceof Date && apart(flag.createdAt, before) < 60_000, `createdAt ${flag.createdAt.toISOString()}`)
    assert.deepEqual(await port.get(world.projectId, flag.id), flag)
  })

  test(`${name} flags: filters JSON round-trips exactly (unicode, nesting, large integers)`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const filters = { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: TRICKY_JSON }, extra: TRICKY_JSON }
    const flag = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ filters, name: TRICKY_JSON.text }) })
    const read = await port.get(world.projectId, flag.id)
    assert.deepEqual(read?.filters, filters)
    assert.equal(read?.name, TRICKY_JSON.text)
  })

  test(`${name} flags: a NUL anywhere is refused naming the field; a lone surrogate is stored as U+FFFD`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const w = { projectId: world.projectId, userId: world.userId }
    await assertRefusedField(port.insert({ ...w, flag: aFlag({ name: 'a\u0000b' }) }), 'name')
    await assertRefusedField(port.insert({ ...w, flag: aFlag({ filters: { groups: [{ properties: [{ key: 'k\u0000', value: 'v' }] }] } }) }), 'filters')
    await assertRefusedField(port.insert({ ...w, flag: aFlag({ tags: ['\u0000'] }) }), 'tags')
    const flag = await port.insert({ ...w, flag: aFlag({ name: LONE_SURROGATE.written, filters: { payloads: { true: LONE_SURROGATE.written } } }) })
    assert.equal(flag.name, LONE_SURROGATE.read)
    assert.deepEqual(flag.filters, { payloads: { true: LONE_SURROGATE.read } })
    await assertRefusedField(port.update({ ...w, id: flag.id, flag: aFlag({ key: flag.key, name: '\u0000' }) }), 'name')
    assert.deepEqual(await port.get(world.projectId, flag.id), flag)
    assert.equal((await port.listLive(world.projectId)).length, 1)
    assert.equal(await port.keyExists(world.projectId, `${flag.key}\u0000`), false)
    assert.deepEqual(await port.list(world.projectId, { search: '\u0000' }, { limit: 10, offset: 0 }), { count: 0, rows: [] })
  })

  test(`${name} flags: listLive is newest first, without deleted flags or other projects' flags`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ins = (key: string, projectId = world.projectId, deleted = false) =>
      port.insert({ projectId, userId: world.userId, flag: aFlag({ key, deleted }) })
    await ins('first')
    await ins('second')
    await ins('gone', world.projectId, true)
    await ins('elsewhere', world.otherProjectId)
    await ins('third')
    assert.deepEqual((await port.listLive(world.projectId)).map((f) => f.key), ['third', 'second', 'first'])
    assert.deepEqual((await port.listLive(world.otherProjectId)).map((f) => f.key), ['elsewhere'])
  })

  test(`${name} flags: list filters, orders and pages the live flags in SQL, with the count of all that pass`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const ins = (over: Parameters<typeof aFlag>[0], projectId = world.projectId, userId = world.userId) => port.insert({ projectId, userId, flag: aFlag(over) })
    const multivariate = { groups: [], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } }
    await ins({ key: 'alpha', name: 'First 100%' })
    await ins({ key: 'beta_x', name: 'Second', active: false })
    await ins({ key: 'gamma', name: 'Third', filters: multivariate, evaluationRuntime: 'server' }, world.projectId, world.otherUserId)
    await ins({ key: 'betaxx', name: 'Fourth' })
    await ins({ key: 'dead', deleted: true })
    await ins({ key: 'theirs' }, world.otherProjectId)
    const keys = async (q: Parameters<FeatureFlagStore['list']>[1], page = { limit: 100, offset: 0 }) => {
      const r = await port.list(world.projectId, q, page)
      return [r.count, r.rows.map((f) => f.key)]
    }
    assert.deepEqual(await keys({}), [4, ['betaxx', 'gamma', 'beta_x', 'alpha']])
    assert.deepEqual(await keys({}, { limit: 2, offset: 1 }), [4, ['gamma', 'beta_x']])
    assert.deepEqual(await keys({ order: 'key' }), [4, ['alpha', 'beta_x', 'betaxx', 'gamma']])
    assert.deepEqual(await keys({ order: '-key' }, { limit: 1, offset: 0 }), [4, ['gamma']])
    assert.deepEqual(await keys({ active: false }), [1, ['beta_x']])
    assert.deepEqual(await keys({ createdById: world.otherUserId }), [1, ['gamma']])
    assert.deepEqual(await keys({ evaluationRuntime: 'server' }), [1, ['gamma']])
    assert.deepEqual(await keys({ type: 'multivariant' }), [1, ['gamma']])
    assert.deepEqual(await keys({ type: 'boolean', order: 'key' }), [3, ['alpha', 'beta_x', 'betaxx']])
    assert.deepEqual(await keys({ type: 'experiment' }), [0, []])
    // The search is a substring of key or name, case-insensitive, with % and _ taken literally.
    assert.deepEqual(await keys({ search: 'BETA_', order: 'key' }), [1, ['beta_x']])
    assert.deepEqual(await keys({ search: '100%' }), [1, ['alpha']])
    assert.deepEqual(await keys({ search: 'third' }), [1, ['gamma']])
  })

  test(`${name} flags: get finds deleted flags, and nothing of another project`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const gone = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ deleted: true }) })
    assert.equal((await port.get(world.projectId, gone.id))?.deleted, true)
    assert.equal(await port.get(world.otherProjectId, gone.id), null)
    assert.equal(await port.get(world.projectId, gone.id + 1000), null)
  })

  test(`${name} flags: keyExists sees live flags of the project only, minus exceptId`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const live = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'k' }) })
    await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'dead', deleted: true }) })
    assert.equal(await port.keyExists(world.projectId, 'k'), true)
    assert.equal(await port.keyExists(world.projectId, 'k', live.id), false)
    assert.equal(await port.keyExists(world.projectId, 'dead'), false)
    assert.equal(await port.keyExists(world.otherProjectId, 'k'), false)
    assert.equal(await port.keyExists(world.projectId, 'K'), false)
  })

  test(`${name} flags: a second live flag with the same key is refused with the service's unique error on key`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'dup' }) })
    await assertTaken(port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'dup' }) }))
    // Other projects may use the key; the failed insert left exactly one live flag behind.
    await port.insert({ projectId: world.otherProjectId, userId: world.userId, flag: aFlag({ key: 'dup' }) })
    assert.equal((await port.listLive(world.projectId)).length, 1)
  })

  test(`${name} flags: of concurrent inserts of one key exactly one wins; the others are refused as taken`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'race', deleted: true }) })
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'race' }) })),
    )
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
    for (const r of results) if (r.status === 'rejected') await assertTaken(Promise.reject(r.reason))
    assert.deepEqual((await port.listLive(world.projectId)).map((f) => f.key), ['race'])
  })

  test(`${name} flags: inserting the key of a soft-deleted flag replaces it`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const old = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'reuse', deleted: true }) })
    const fresh = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'reuse' }) })
    assert.notEqual(fresh.id, old.id)
    assert.equal(await port.get(world.projectId, old.id), null)
    assert.equal(fresh.version, 1)
  })

  test(`${name} flags: update replaces the writable fields, bumps version and records the modifier`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const flag = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'u' }) })
    const write = aFlag({ key: 'u2', name: 'renamed', active: false, tags: ['x'], ensureExperienceContinuity: true, evaluationRuntime: 'server', filters: { groups: [] } })
    const updated = await port.update({ projectId: world.projectId, id: flag.id, userId: world.otherUserId, flag: write })
    assert.equal(updated.version, 2)
    assert.equal(updated.key, 'u2')
    assert.equal(updated.name, 'renamed')
    assert.equal(updated.active, false)
    assert.equal(updated.ensureExperienceContinuity, true)
    assert.equal(updated.evaluationRuntime, 'server')
    assert.deepEqual(updated.tags, ['x'])
    assert.deepEqual(updated.filters, { groups: [] })
    assert.equal(updated.createdBy?.id, world.userId)
    assert.equal(updated.lastModifiedBy?.id, world.otherUserId)
    assert.ok(updated.updatedAt.getTime() >= flag.updatedAt.getTime())
    assert.equal(updated.createdAt.getTime(), flag.createdAt.getTime())
  })

  test(`${name} flags: update to another live flag's key is refused as taken; soft-delete frees the key`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const a = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'a' }) })
    const b = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'b' }) })
    await assertTaken(port.update({ projectId: world.projectId, id: b.id, userId: world.userId, flag: aFlag({ key: 'a' }) }))
    assert.equal((await port.get(world.projectId, b.id))?.key, 'b')
    await port.update({ projectId: world.projectId, id: a.id, userId: world.userId, flag: aFlag({ key: 'a', deleted: true }) })
    assert.equal((await port.update({ projectId: world.projectId, id: b.id, userId: world.userId, flag: aFlag({ key: 'a' }) })).key, 'a')
  })

  test(`${name} flags: update through another project changes nothing`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const flag = await port.insert({ projectId: world.projectId, userId: world.userId, flag: aFlag({ key: 'mine' }) })
    await port.update({ projectId: world.otherProjectId, id: flag.id, userId: world.userId, flag: aFlag({ key: 'stolen' }) }).catch(() => null)
    assert.deepEqual(await port.get(world.projectId, flag.id), flag)
  })
}
