import type { User } from '../projects/project-types.ts'

/** PostHog's OrganizationMembership levels. */
export const LEVEL = { member: 1, admin: 8, owner: 15 } as const
export type MembershipLevel = (typeof LEVEL)[keyof typeof LEVEL]
export const LEVELS: readonly MembershipLevel[] = [LEVEL.member, LEVEL.admin, LEVEL.owner]

/** A user's membership of their organization. */
export interface Membership {
  /** The membership's own id (PostHog's OrganizationMembership.id). */
  id: string
  organizationId: number
  organizationUuid: string
  organizationName: string
  level: MembershipLevel
  joinedAt: Date
  updatedAt: Date
}

/** One row of an organization's member list. */
export interface Member {
  id: string
  user: User
  level: MembershipLevel
  joinedAt: Date
  updatedAt: Date
}

export interface Invite {
  id: string
  organizationId: number
  targetEmail: string
  level: MembershipLevel
  createdBy: User | null
  createdAt: Date
  expiresAt: Date
}

/** A personal API key as listed: never its value (the store keeps a hash). */
export interface PersonalKey {
  id: number
  label: string
  maskValue: string
  createdAt: Date
  lastUsedAt: Date | null
}

/** A user signing in: the stored password hash (null: none set yet) travels only inside the service. */
export interface Credentials {
  user: User
  passwordHash: string | null
}

/** What a session token opens. */
export interface SessionRecord {
  id: number
  user: User
  expiresAt: Date
}

/** A new account's fields (sign-up through an invite, `tally users create`). */
export interface NewAccount {
  email: string
  firstName: string
  passwordHash: string | null
  level: MembershipLevel
}
