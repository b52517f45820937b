import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { BootstrapInput, ProjectStore } from '../../src/modules/projects/project-store.ts'
import { apart, assertRefusedField, rejection } from './builders.ts'
import type { Open } from './sql-harness.ts'
import { DEFAULT_SDK_SETTINGS } from '../../src/modules/projects/project-settings.ts'

function aBootstrap(over: Partial<BootstrapInput> = {}): BootstrapInput {
  return {
    organizationName: 'Org ☕',
    projectName: 'Default',
    projectApiToken: 'phc_token_1',
    user: { email: 'owner@example.com', firstName: 'Owner' },
    personalKey: { hash: 'hash-1', mask: 'phx_...aaa', label: 'bootstrap' },
    ...over,
  }
}

/** What every ProjectStore adapter promises (organizations, users, projects, members, personal keys). */
export function projectStoreContract(name: string, open: Open<ProjectStore>): void {
  test(`${name} projects: bootstrap makes the organization, its owner, the project and the key`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    assert.equal(await port.isEmpty(), true)
    assert.equal(await port.firstUser(), null)
    const before = new Date()
    const { organization, user, project } = await port.bootstrap(aBootstrap())
    assert.equal(await port.isEmpty(), false)
    assert.equal(organization.name, 'Org ☕')
    assert.equal(project.name, 'Default')
    assert.equal(project.apiToken, 'phc_token_1')
    assert.equal(project.organizationId, organization.id)
    assert.equal(project.organizationUuid, organization.uuid)
    assert.equal(project.timezone, 'UTC')
    assert.ok(apart(project.createdAt, before) < 60_000, `createdAt ${project.createdAt.toISOString()}`)
    assert.equal(user.currentProjectId, project.id)
    assert.equal(user.email, 'owner@example.com')
    assert.equal(user.organizationId, organization.id)
    assert.deepEqual(await port.firstUser(), user)
    assert.deepEqual(await port.findUserById(user.id), user)
    assert.deepEqual(await port.findUserByPersonalKeyHash('hash-1'), user)
    assert.deepEqual(await port.listProjects(), [project])
    assert.deepEqual(await port.listProjectsOfUser(user.id), [project])
    assert.deepEqual(await port.findProjectByToken('phc_token_1'), project)
  })

  test(`${name} projects: a bootstrap that fails half-way leaves nothing behind`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const { project } = await port.bootstrap(aBootstrap())
    // Same project token: the organization and user rows are written before the project insert fails.
    const err = await rejection(port.bootstrap(aBootstrap({ user: { email: 'two@example.com', firstName: 'Two' }, personalKey: { hash: 'hash-2', mask: 'm', label: 'l' } })))
    assert.equal(err.code, '23505')
    assert.deepEqual(await port.listProjects(), [project])
    assert.equal(await port.findUserByPersonalKeyHash('hash-2'), null)
    const again = await rejection(port.createUser({ organizationId: project.organizationId, email: 'owner@example.com', firstName: 'X' }))
    assert.equal(again.code, '23505')
    assert.ok(await port.createUser({ organizationId: project.organizationId, email: 'two@example.com', firstName: 'Two' }))
  })

  test(`${name} projects: a NUL in a name or an email is refused naming the field`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    await assertRefusedField(port.bootstrap(aBootstrap({ projectName: 'p\u0000' })), 'name')
    assert.equal(await port.isEmpty(), true)
    const { organization } = await port.bootstrap(aBootstrap())
    await assertRefusedField(port.createProject({ organizationId: organization.id, name: '\u0000', apiToken: 'phc_x' }), 'name')
    await assertRefusedField(port.createUser({ organizationId: organization.id, email: 'a\u0000@x.io', firstName: 'A' }), 'email')
    assert.equal((await port.listProjects()).length, 1)
    assert.equal(await port.findProjectByToken('phc_token_1\u0000'), null)
    assert.equal(await port.findUserByPersonalKeyHash('hash-1\u0000'), null)
  })

  test(`${name} projects: a new project makes every member of the organization a member of it`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const { organization, user, project } = await port.bootstrap(aBootstrap())
    const second = await port.createProject({ organizationId: organization.id, name: 'Second', apiToken: 'phc_token_2' })
    assert.equal(second.name, 'Second')
    assert.deepEqual((await port.listProjectsOfUser(user.id)).map((p) => p.id), [project.id, second.id])
    assert.deepEqual(await port.findProjectOfUser(user.id, second.id), second)
    assert.deepEqual(await port.findProjectByToken('phc_token_2'), second)
    const dup = await rejection(port.createProject({ organizationId: organization.id, name: 'Dup', apiToken: 'phc_token_2' }))
    assert.equal(dup.code, '23505')
    assert.equal((await port.listProjects()).length, 2)
  })

  test(`${name} projects: SDK settings start at PostHog's defaults, change only where named, and are read back by id`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const { project } = await port.bootstrap(aBootstrap())
    assert.deepEqual(project.settings, DEFAULT_SDK_SETTINGS)
    const updated = await port.updateSettings(project.id, { sdk: { heatmaps_opt_in: true, capture_performance_opt_in: null } })
    assert.deepEqual(updated.settings, { ...DEFAULT_SDK_SETTINGS, heatmaps_opt_in: true, capture_performance_opt_in: null })
    assert.equal(updated.name, 'Default')
    assert.deepEqual((await port.findProjectById(project.id))?.settings, updated.settings)
    assert.equal(await port.findProjectById(project.id + 1000), null)
    assert.deepEqual(await port.projectsWithEvents([project.id, project.id + 1000]), new Set())
  })

  test(`${name} projects: users see only the projects they are members of`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const { organization, project } = await port.bootstrap(aBootstrap())
    const stranger = await port.createUser({ organizationId: organization.id, email: 'stranger@example.com', firstName: 'S' })
    assert.equal(stranger.currentProjectId, null)
    assert.deepEqual(await port.listProjectsOfUser(stranger.id), [])
    assert.equal(await port.findProjectOfUser(stranger.id, project.id), null)
    await port.addMember(project.id, stranger.id, 1)
    await port.addMember(project.id, stranger.id, 8) // again: the level changes, no error
    assert.deepEqual((await port.listProjectsOfUser(stranger.id)).map((p) => p.id), [project.id])
    assert.equal((await port.findUserById(stranger.id))?.currentProjectId, project.id)
    const later = await port.createProject({ organizationId: organization.id, name: 'Later', apiToken: 'phc_later' })
    assert.equal((await port.findUserById(stranger.id))?.currentProjectId, project.id)
    assert.deepEqual((await port.listProjectsOfUser(stranger.id)).map((p) => p.id), [project.id, later.id])
  })

  test(`${name} projects: personal keys find their user, every time; unknown keys and ids find nothing`, async (t) => {
    const { port, close } = await open()
    t.after(close)
    const { organization } = await port.bootstrap(aBootstrap())
    const other = await port.createUser({ organizationId: organization.id, email: 'k@example.com', firstName: 'K' })
    await port.addPersonalKey(other.id, { hash: 'hash-k', mask: 'phx_...kkk', label: 'ci' })
    for (let i = 0; i < 3; i++) assert.equal((await port.findUserByPersonalKeyHash('hash-k'))?.id, other.id)
    assert.equal(await port.findUserByPersonalKeyHash('nope'), null)
    assert.equal(await port.findUserById(other.id + 100), null)
    assert.equal(await port.findProjectByToken('phc_nope'), null)
    const dup = await rejection(port.addPersonalKey(other.id, { hash: 'hash-k', mask: 'm', label: 'again' }))
    assert.equal(dup.code, '23505')
  })
}
