import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AuthStore } from '../../src/modules/auth/auth-store.ts'
import { assertRefusedField, rejection } from './builders.ts'
import type { OpenInWorld } from './sql-harness.ts'

const T0 = new Date('2026-03-01T10:00:00.000Z')
const at = (ms: number) => new Date(T0.getTime() + ms)
const HOUR = 3_600_000

/** What every AuthStore adapter promises (sessions, set-up tokens, invites, members, personal keys). */
export function authStoreContract(name: string, open: OpenInWorld<AuthStore>): void {
  test(`${name} auth: credentials by e-mail, memberships, and a session that expires at its time`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const membership = await port.findMembership(world.userId)
    assert.equal(membership?.level, 15)
    assert.equal(membership?.organizationId, world.organizationId)
    assert.equal((await port.findMembership(world.otherUserId))?.level, 1)
    const credentials = await port.findCredentials('owner@example.com')
    assert.equal(credentials?.user.id, world.userId)
    assert.equal(credentials?.passwordHash, null)
    assert.equal(await port.hasPassword(world.userId), false)
    await port.setPassword(world.userId, 'scrypt$hash')
    assert.equal((await port.findCredentials('owner@example.com'))?.passwordHash, 'scrypt$hash')
    assert.equal(await port.hasPassword(world.userId), true)
    assert.equal(await port.findCredentials('nobody@example.com'), null)
    assert.equal(await port.findCredentials('nul\u0000@example.com'), null)

    await port.createSession(world.userId, 'session-hash', at(HOUR))
    const found = await port.findSession('session-hash', T0)
    assert.equal(found?.user.id, world.userId)
    assert.equal(found?.expiresAt.toISOString(), at(HOUR).toISOString())
    assert.equal(await port.findSession('session-hash', at(HOUR)), null, 'expired at its expiry')
    await port.extendSession(found!.id, at(2 * HOUR))
    assert.equal((await port.findSession('session-hash', at(HOUR)))?.user.id, world.userId, 'extended')
    assert.equal(await port.findSession('other-hash', T0), null)
    await port.deleteSession('session-hash')
    assert.equal(await port.findSession('session-hash', T0), null)
  })

  test(`${name} auth: a new password ends every session of the user only`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.createSession(world.userId, 's1', at(HOUR))
    await port.createSession(world.userId, 's2', at(HOUR))
    await port.createSession(world.otherUserId, 's3', at(HOUR))
    await port.setPassword(world.userId, 'new')
    assert.equal(await port.findSession('s1', T0), null)
    assert.equal(await port.findSession('s2', T0), null)
    assert.equal((await port.findSession('s3', T0))?.user.id, world.otherUserId)
  })

  test(`${name} auth: a set-up token is used once, not after it expires, and a taken e-mail is refused`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await port.createSetupToken(world.userId, 'setup', at(HOUR))
    assert.equal((await port.findSetupToken('setup', T0))?.id, world.userId)
    assert.equal(await port.findSetupToken('setup', at(HOUR)), null)
    await assertRefusedField(port.completeSetup('setup', T0, { email: 'second@example.com', firstName: 'X', passwordHash: 'h' }), 'email')
    assert.equal((await port.findSetupToken('setup', T0))?.id, world.userId, 'a refused set-up leaves the token unused')
    await port.createSession(world.userId, 'old-session', at(HOUR))
    // Two uses at once: exactly one wins.
    const both = await Promise.all([
      port.completeSetup('setup', T0, { email: 'boss@example.com', firstName: 'Boss', passwordHash: 'h1' }),
      port.completeSetup('setup', T0, { email: 'boss2@example.com', firstName: 'Boss', passwordHash: 'h2' }),
    ])
    const winners = both.filter((u) => u !== null)
    assert.equal(winners.length, 1)
    assert.equal(winners[0]!.firstName, 'Boss')
    assert.equal(await port.findSession('old-session', T0), null, 'sessions end with the new password')
    assert.equal(await port.completeSetup('setup', T0, { email: 'x@example.com', firstName: 'X', passwordHash: 'h' }), null)
    await port.createSetupToken(world.userId, 'late', at(HOUR))
    assert.equal(await port.completeSetup('late', at(HOUR), { email: 'x@example.com', firstName: 'X', passwordHash: 'h' }), null)
  })

  test(`${name} auth: an invite lists until used, signs up once at its level with access to every project`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const invite = await port.createInvite({ organizationId: world.organizationId, tokenHash: 'inv', targetEmail: 'new@example.com', level: 8, createdBy: world.userId, expiresAt: at(HOUR) })
    assert.equal(invite.level, 8)
    assert.equal(invite.createdBy?.id, world.userId)
    const page = await port.listInvites(world.organizationId, { limit: 10, offset: 0 })
    assert.deepEqual(page.rows.map((i) => i.id), [invite.id])
    assert.equal(page.count, 1)
    assert.equal((await port.findInvite('inv', T0))?.organizationName, 'Org')
    assert.equal(await port.findInvite('inv', at(HOUR)), null, 'expired')
    assert.equal(await port.signUpWithInvite('inv', at(HOUR), { email: 'new@example.com', firstName: 'N', passwordHash: 'h' }), null)
    const user = await port.signUpWithInvite('inv', T0, { email: 'new@example.com', firstName: 'N', passwordHash: 'h' })
    assert.ok(user)
    assert.equal((await port.findMembership(user.id))?.level, 8)
    assert.equal((await port.findCredentials('new@example.com'))?.passwordHash, 'h')
    assert.ok([world.projectId, world.otherProjectId].includes(user.currentProjectId!))
    assert.equal(await port.signUpWithInvite('inv', T0, { email: 'new@example.com', firstName: 'N', passwordHash: 'h' }), null, 'used once')
    assert.equal((await port.listInvites(world.organizationId, { limit: 10, offset: 0 })).count, 0)
    assert.equal(await port.deleteInvite(world.organizationId, invite.id), false, 'a used invite is not pending')
  })

  test(`${name} auth: members page, levels (also on project memberships), owners count, removal ends access`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const page = await port.listMembers(world.organizationId, { limit: 1, offset: 1 })
    assert.equal(page.count, 2)
    assert.deepEqual(page.rows.map((m) => m.user.id), [world.otherUserId])
    const second = page.rows[0]!
    assert.deepEqual(await port.findMember(world.organizationId, second.user.uuid), second)
    assert.equal(await port.findMember(world.organizationId, 'not-a-uuid'), null)
    assert.equal(await port.countOwners(world.organizationId), 1)
    const promoted = await port.setMemberLevel(world.organizationId, world.otherUserId, 15)
    assert.equal(promoted.level, 15)
    assert.equal(await port.countOwners(world.organizationId), 2)

    await port.createSession(world.otherUserId, 'their-session', at(HOUR))
    const key = await port.addPersonalKey(world.otherUserId, { hash: 'their-key', mask: 'phx_...k', label: 'k' })
    assert.deepEqual((await port.listPersonalKeys(world.otherUserId)).map((k) => k.id), [key.id])
    await port.removeMember(world.organizationId, world.otherUserId)
    assert.equal(await port.findMembership(world.otherUserId), null)
    assert.equal(await port.findSession('their-session', T0), null)
    assert.deepEqual(await port.listPersonalKeys(world.otherUserId), [])
    assert.equal(await port.findCredentials('second@example.com'), null, 'a removed user cannot sign in')
    assert.equal((await port.findUserByEmail('second@example.com'))?.id, world.otherUserId)
  })

  test(`${name} auth: accounts refuse a taken e-mail; personal keys are deleted only by their owner`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const user = await port.createAccount(world.organizationId, { email: 'third@example.com', firstName: 'Third', passwordHash: null, level: 1 })
    assert.equal((await port.findMembership(user.id))?.level, 1)
    await assertRefusedField(port.createAccount(world.organizationId, { email: 'third@example.com', firstName: 'Again', passwordHash: null, level: 1 }), 'email')
    await assertRefusedField(port.createAccount(world.organizationId, { email: 'nul\u0000@example.com', firstName: 'N', passwordHash: null, level: 1 }), 'email')
    const key = await port.addPersonalKey(world.userId, { hash: 'owner-key', mask: 'phx_...o', label: 'mine' })
    assert.equal(key.label, 'mine')
    assert.equal(key.lastUsedAt, null)
    assert.equal(await port.deletePersonalKey(user.id, key.id), false)
    assert.equal((await port.listPersonalKeys(world.userId)).some((k) => k.id === key.id), true)
    assert.equal(await port.deletePersonalKey(world.userId, key.id), true)
    const err = await rejection(port.addPersonalKey(world.userId, { hash: 'owner-key-2', mask: 'm', label: 'bad\u0000' }))
    assert.equal((err as { attr?: string }).attr, 'label')
  })
}
