import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { GroupTypeStore } from '../../src/modules/group-types/group-type-store.ts'
import { assertRefusedField, LONE_SURROGATE } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

/** What every GroupTypeStore adapter promises. */
export function groupTypeStoreContract(name: string, open: OpenInWorld<GroupTypeStore>): void {
  test(`${name} group types: insertMissing gives the lowest free indexes in order and returns the full list`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    assert.deepEqual(await port.list(world.projectId), [])
    const first = await port.insertMissing(world.projectId, ['company', 'team'])
    assert.deepEqual(first.map((g) => [g.groupType, g.groupTypeIndex]), [['company', 0], ['team', 1]])
    const again = await port.insertMissing(world.projectId, ['team', 'workspace', 'company'])
    assert.deepEqual(again.map((g) => [g.groupType, g.groupTypeIndex]), [['company', 0], ['team', 1], ['workspace', 2]])
    assert.deepEqual(again[0], { groupType: 'company', groupTypeIndex: 0, nameSingular: null, namePlural: null })
  })

  test(`${name} group types: at most five per project; names past the fifth are skipped`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const all = await port.insertMissing(world.projectId, ['a', 'b', 'c', 'd', 'e', 'f', 'g'])
    assert.deepEqual(all.map((g) => g.groupType), ['a', 'b', 'c', 'd', 'e'])
    assert.equal((await port.insertMissing(world.projectId, ['h'])).length, 5)
  })

  test(`${name} group types: projects are independent`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.insertMissing(world.projectId, ['company'])
    const other = await port.insertMissing(world.otherProjectId, ['team', 'company'])
    assert.deepEqual(other.map((g) => [g.groupType, g.groupTypeIndex]), [['team', 0], ['company', 1]])
    assert.deepEqual((await port.list(world.projectId)).map((g) => g.groupType), ['company'])
  })

  test(`${name} group types: concurrent writers never share an index nor lose a name`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await Promise.all([
      port.insertMissing(world.projectId, ['a', 'b', 'c']),
      port.insertMissing(world.projectId, ['c', 'd']),
      port.insertMissing(world.projectId, ['e', 'a']),
    ])
    const all = await port.list(world.projectId)
    assert.deepEqual(all.map((g) => g.groupTypeIndex), [0, 1, 2, 3, 4])
    assert.deepEqual(all.map((g) => g.groupType).sort(), ['a', 'b', 'c', 'd', 'e'])
  })

  test(`${name} group types: a NUL in a name from events is stored as U+FFFD; in a display name it is refused`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const all = await port.insertMissing(world.projectId, ['org\u0000', LONE_SURROGATE.written])
    assert.deepEqual(all.map((g) => g.groupType), ['org\uFFFD', LONE_SURROGATE.read])
    await assertRefusedField(port.updateNames(world.projectId, 0, { nameSingular: 'a\u0000', namePlural: null }), 'name_singular')
    assert.equal((await port.list(world.projectId))[0]!.nameSingular, null)
  })

  test(`${name} group types: updateNames sets and clears the display names of one index`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.insertMissing(world.projectId, ['company', 'team'])
    await port.insertMissing(world.otherProjectId, ['company'])
    await port.updateNames(world.projectId, 0, { nameSingular: 'Société ✓', namePlural: 'Sociétés' })
    const [company, team] = await port.list(world.projectId)
    assert.deepEqual([company!.nameSingular, company!.namePlural], ['Société ✓', 'Sociétés'])
    assert.deepEqual([team!.nameSingular, team!.namePlural], [null, null])
    assert.equal((await port.list(world.otherProjectId))[0]!.nameSingular, null)
    await port.updateNames(world.projectId, 0, { nameSingular: null, namePlural: null })
    assert.equal((await port.list(world.projectId))[0]!.nameSingular, null)
  })
}
