import { AppError, validationError } from '../../shared/errors.ts'
import { generateToken, hashSecret, maskSecret } from '../../shared/ids.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'
import type { Page } from '../../shared/page.ts'
import type { ProjectService } from '../projects/project-service.ts'
import type { User } from '../projects/project-types.ts'
import type { AuthStore } from './auth-store.ts'
import { newSecretToken, readNewPassword, type AuthService } from './auth-service.ts'
import { LEVEL, type Invite, type Member, type MembershipLevel } from './auth-types.ts'
import { hashPassword } from './passwords.ts'

/**
 * An organization's members and invitations, and each user's personal API keys. Managing members
 * and invites needs an admin or owner (PostHog's OrganizationMemberPermissions); keys are strictly
 * their owner's: nobody lists, sees or revokes another user's key.
 */
export function createMemberService(deps: { store: AuthStore; auth: AuthService; projects: ProjectService; clock?: Clock }) {
  const { store, auth, projects } = deps
  const clock = deps.clock ?? systemClock
  const now = () => new Date(clock.now())

  async function memberOf(actor: User, userUuid: string): Promise<{ organizationId: number; actorLevel: number; member: Member }> {
    const membership = await auth.membershipOf(actor)
    const member = await store.findMember(membership.organizationId, userUuid)
    if (!member) throw new AppError('not_found', 'Not found.')
    return { organizationId: membership.organizationId, actorLevel: membership.level, member }
  }

  async function refuseLastOwner(organizationId: number, member: Member): Promise<void> {
    if (member.level === LEVEL.owner && (await store.countOwners(organizationId)) <= 1) {
      throw new AppError('permission_denied', 'The organization must keep at least one owner.')
    }
  }

  return {
    async listMembers(actor: User, page: Page) {
      const membership = await auth.membershipOf(actor)
      return store.listMembers(membership.organizationId, page)
    },

    /**
     * PostHog's rules: only admins and owners change levels, never their own, never above their
     * own, and an admin cannot touch an owner; the last owner keeps the role.
     */
    async setLevel(actor: User, userUuid: string, level: MembershipLevel): Promise<Member> {
      const { organizationId, actorLevel, member } = await memberOf(actor, userUuid)
      if (actorLevel < LEVEL.admin) throw new AppError('permission_denied', 'You do not have the permission to change member levels.')
      if (member.user.id === actor.id) throw new AppError('permission_denied', 'You cannot change your own access level.')
      if (level > actorLevel) throw new AppError('permission_denied', 'You can only assign levels up to your own.')
      if (member.level > actorLevel) throw new AppError('permission_denied', 'You can only edit others with a level lower or equal to yours.')
      if (level < LEVEL.owner) await refuseLastOwner(organizationId, member)
      return store.setMemberLevel(organizationId, member.user.id, level)
    },

    /** Admins and owners remove others (an admin not an owner); anyone may leave; the last owner stays. */
    async remove(actor: User, userUuid: string): Promise<void> {
      const { organizationId, actorLevel, member } = await memberOf(actor, userUuid)
      if (member.user.id !== actor.id) {
        if (actorLevel < LEVEL.admin) throw new AppError('permission_denied', 'You do not have the permission to remove members.')
        if (member.level > actorLevel) throw new AppError('permission_denied', 'You can only remove others with a level lower or equal to yours.')
      }
      await refuseLastOwner(organizationId, member)
      await store.removeMember(organizationId, member.user.id)
      projects.forgetPersonalKeysOf(member.user.id)
    },

    async listInvites(actor: User, page: Page) {
      const membership = await auth.requireAdmin(actor)
      return store.listInvites(membership.organizationId, page)
    },

    /** A one-time invite link token (returned once; stored hashed), replacing pending invites to the e-mail. */
    async invite(actor: User, input: { targetEmail: string; level: MembershipLevel }): Promise<{ invite: Invite; token: string }> {
      const membership = await auth.requireAdmin(actor)
      if (input.level > membership.level) throw new AppError('permission_denied', 'You can only invite others with a level up to your own.')
      const existing = await store.findUserByEmail(input.targetEmail)
      if (existing && (await store.findMembership(existing.id))) {
        throw validationError('target_email', `${input.targetEmail} is already a member of this organization.`, 'invalid_input')
      }
      await store.deleteInvitesTo(membership.organizationId, input.targetEmail)
      const token = newSecretToken()
      const invite = await store.createInvite({
        organizationId: membership.organizationId,
        tokenHash: hashSecret(token),
        targetEmail: input.targetEmail,
        level: input.level,
        createdBy: actor.id,
        expiresAt: new Date(clock.now() + auth.settings.inviteTtlMs),
      })
      return { invite, token }
    },

    async deleteInvite(actor: User, id: string): Promise<void> {
      const membership = await auth.requireAdmin(actor)
      const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
      if (!isUuid || !(await store.deleteInvite(membership.organizationId, id))) throw new AppError('not_found', 'Not found.')
    },

    findInvite: (token: string) => store.findInvite(hashSecret(token), now()),

    /** Creates the invited account at the invite's level and uses the invite up (once). */
    async signUp(input: { inviteToken: string; email: string | null; password: string; firstName: string }): Promise<User> {
      const tokenHash = hashSecret(input.inviteToken)
      const invite = await store.findInvite(tokenHash, now())
      if (!invite) throw validationError('invite_token', 'This invite is invalid, expired or already used.', 'invalid_invite')
      if (input.email !== null && input.email !== invite.targetEmail.toLowerCase()) {
        throw validationError('email', 'This invite is for another email address.', 'invalid_recipient')
      }
      const passwordHash = await hashPassword(readNewPassword(input.password))
      const user = await store.signUpWithInvite(tokenHash, now(), { email: invite.targetEmail.toLowerCase(), firstName: input.firstName, passwordHash })
      if (!user) throw validationError('invite_token', 'This invite is invalid, expired or already used.', 'invalid_invite')
      return user
    },

    listKeys: (user: User) => store.listPersonalKeys(user.id),

    /** A new personal API key of the user; its value is returned only now. */
    async createKey(user: User, label: string) {
      const value = generateToken('phx_')
      const key = await store.addPersonalKey(user.id, { hash: hashSecret(value), mask: maskSecret(value), label })
      return { key, value }
    },

    async deleteKey(user: User, id: number): Promise<void> {
      if (!(await store.deletePersonalKey(user.id, id))) throw new AppError('not_found', 'Not found.')
      projects.forgetPersonalKeysOf(user.id)
    },
  }
}

export type MemberService = ReturnType<typeof createMemberService>
