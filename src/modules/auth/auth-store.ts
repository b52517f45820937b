import type { Page } from '../../shared/page.ts'
import type { User } from '../projects/project-types.ts'
import type { Credentials, Invite, Member, Membership, MembershipLevel, NewAccount, PersonalKey, SessionRecord } from './auth-types.ts'

/**
 * Persistence of accounts: passwords, memberships, sessions, invites, set-up tokens and personal keys.
 * Tokens arrive already hashed; e-mails arrive lower-cased. `now` is passed in so that expiry follows
 * the service's clock.
 */
export interface AuthStore {
  /** The user with this e-mail (case-insensitive) who is a member of an organization, with their password hash. */
  findCredentials(email: string): Promise<Credentials | null>
  /** Any user with this e-mail (case-insensitive), member or not. */
  findUserByEmail(email: string): Promise<User | null>
  findMembership(userId: number): Promise<Membership | null>
  hasPassword(userId: number): Promise<boolean>
  setFirstName(userId: number, firstName: string): Promise<User>
  /** Sets the password and ends every session of the user. */
  setPassword(userId: number, passwordHash: string): Promise<void>

  createSession(userId: number, tokenHash: string, expiresAt: Date): Promise<void>
  /** The unexpired session of this token whose user still belongs to an organization, or null. */
  findSession(tokenHash: string, now: Date): Promise<SessionRecord | null>
  extendSession(id: number, expiresAt: Date): Promise<void>
  deleteSession(tokenHash: string): Promise<void>

  createSetupToken(userId: number, tokenHash: string, expiresAt: Date): Promise<void>
  /** The user of an unused, unexpired set-up token, or null. */
  findSetupToken(tokenHash: string, now: Date): Promise<User | null>
  /**
   * Uses the token once: sets the user's e-mail, first name and password and ends their sessions, in
   * one transaction. Null when the token is used, expired or unknown (a second use loses the race).
   */
  completeSetup(tokenHash: string, now: Date, input: { email: string; firstName: string; passwordHash: string }): Promise<User | null>

  /** Adds a user to the organization at `level`, with access to every project of it. */
  createAccount(organizationId: number, input: NewAccount): Promise<User>

  createInvite(input: { organizationId: number; tokenHash: string; targetEmail: string; level: MembershipLevel; createdBy: number; expiresAt: Date }): Promise<Invite>
  /** Pending (unused) invites of the organization, newest first. */
  listInvites(organizationId: number, page: Page): Promise<{ count: number; rows: Invite[] }>
  /** Removes pending invites to this e-mail (a new invite replaces them, as PostHog does). */
  deleteInvitesTo(organizationId: number, targetEmail: string): Promise<void>
  deleteInvite(organizationId: number, id: string): Promise<boolean>
  /** The unused, unexpired invite of this token, or null. */
  findInvite(tokenHash: string, now: Date): Promise<(Invite & { organizationName: string }) | null>
  /**
   * Uses the invite once and creates the account at its level, in one transaction. Null when the
   * invite is used, expired or unknown. A user with the e-mail who left every organization is
   * taken back rather than duplicated.
   */
  signUpWithInvite(tokenHash: string, now: Date, input: { email: string; firstName: string; passwordHash: string }): Promise<User | null>

  listMembers(organizationId: number, page: Page): Promise<{ count: number; rows: Member[] }>
  findMember(organizationId: number, userUuid: string): Promise<Member | null>
  countOwners(organizationId: number): Promise<number>
  /** Sets the organization level and the same level on the user's project memberships of it. */
  setMemberLevel(organizationId: number, userId: number, level: MembershipLevel): Promise<Member>
  /** Removes the membership, the user's access to the organization's projects, their sessions and personal keys. */
  removeMember(organizationId: number, userId: number): Promise<void>

  listPersonalKeys(userId: number): Promise<PersonalKey[]>
  addPersonalKey(userId: number, key: { hash: string; mask: string; label: string }): Promise<PersonalKey>
  /** Deletes the key only if it is this user's; false otherwise. */
  deletePersonalKey(userId: number, id: number): Promise<boolean>
}
