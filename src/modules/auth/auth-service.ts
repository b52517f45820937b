import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { AppError, validationError } from '../../shared/errors.ts'
import { hashSecret } from '../../shared/ids.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'
import type { ProjectService } from '../projects/project-service.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { AuthStore } from './auth-store.ts'
import { LEVEL, type Membership, type MembershipLevel } from './auth-types.ts'
import { createLoginThrottle } from './login-throttle.ts'
import type { ChangeBus } from '../../shared/change-bus.ts'
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.ts'

/** Sign-in limits and lifetimes (config `auth`). */
export interface AuthSettings {
  /** Failed sign-ins per client address and per e-mail within `loginWindowMs` before 429. */
  loginMaxFailures: number
  loginWindowMs: number
  /** A session unused this long ends; every use pushes the end back (sliding expiry). */
  sessionTtlMs: number
  setupTokenTtlMs: number
  inviteTtlMs: number
}

export const DEFAULT_AUTH_SETTINGS: AuthSettings = {
  loginMaxFailures: 5,
  loginWindowMs: 15 * 60_000,
  sessionTtlMs: 14 * 24 * 3_600_000,
  setupTokenTtlMs: 24 * 3_600_000,
  // PostHog's INVITE_DAYS_VALIDITY.
  inviteTtlMs: 3 * 24 * 3_600_000,
}

// A session's expiry is pushed back at most once per this (not a write on every request).
const EXTEND_EVERY_MS = 3_600_000

/** A random 256-bit token, url-safe. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * The CSRF token of a session: derived from the session token (so a cookie planted by another site
 * or subdomain cannot match a session it does not know), sent in a readable cookie and echoed in
 * `X-CSRFToken`.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update(`csrf$${sessionToken}`).digest('base64url')
}

/** Constant-time equality of two strings (false when the lengths differ). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** A session just opened: the token for the cookie, its CSRF token, and how long both live. */
export interface OpenedSession {
  token: string
  csrfToken: string
  maxAgeSeconds: number
  user: User
}

/** A new password meets PostHog's (Django's) minimum length. */
export function readNewPassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw validationError('password', `This password is too short. It must contain at least ${MIN_PASSWORD_LENGTH} characters.`, 'password_too_short')
  }
  return password
}

/**
 * Accounts and browser sessions: sign-in (rate-limited), sessions (random tokens stored hashed,
 * sliding expiry), the one-time set-up links, and what `/api/users/@me/` shows. Throws AppError.
 */
export function createAuthService(deps: {
  store: AuthStore
  projects: ProjectService
  settings?: AuthSettings
  clock?: Clock
  /** Other processes' sign-in failures count here too (several api processes share one throttle). */
  changes?: ChangeBus
}) {
  const { store, projects } = deps
  const settings = deps.settings ?? DEFAULT_AUTH_SETTINGS
  const clock = deps.clock ?? systemClock
  const throttle = createLoginThrottle({ maxFailures: settings.loginMaxFailures, windowMs: settings.loginWindowMs }, clock)
  deps.changes?.subscribe((c) => {
    if (c.kind === 'login-failure') throttle.recordFailure(c.keys)
    else if (c.kind === 'login-success') throttle.clear(c.key)
  })
  const now = () => new Date(clock.now())

  async function openSession(user: User): Promise<OpenedSession> {
    const token = newSecretToken()
    await store.createSession(user.id, hashSecret(token), new Date(clock.now() + settings.sessionTtlMs))
    return { token, csrfToken: csrfTokenFor(token), maxAgeSeconds: Math.floor(settings.sessionTtlMs / 1000), user }
  }

  /** A one-time link token for `userId` (default: the first user, the owner made at first start). */
  async function createSetupToken(userId?: number): Promise<string> {
    const user = userId === undefined ? await projects.firstUser() : { id: userId }
    if (!user) throw new AppError('not_found', 'Tally has not been initialised.')
    const token = newSecretToken()
    await store.createSetupToken(user.id, hashSecret(token), new Date(clock.now() + settings.setupTokenTtlMs))
    return token
  }

  async function membershipOf(user: User): Promise<Membership> {
    const membership = await store.findMembership(user.id)
    if (!membership) throw new AppError('permission_denied', 'You are not a member of any organization.')
    return membership
  }

  return {
    settings,
    membershipOf,

    /** The user's organization level, 0 when they belong to none. */
    async levelOf(user: User): Promise<number> {
      return (await store.findMembership(user.id))?.level ?? 0
    },

    /** `permission_denied` unless the user is an admin or owner of their organization. */
    async requireAdmin(user: User): Promise<Membership> {
      const membership = await membershipOf(user)
      if (membership.level < LEVEL.admin) throw new AppError('permission_denied', 'You must be an organization admin or owner to do this.')
      return membership
    },

    /**
     * Checks e-mail and password. Refused with `throttled` (before any hashing) once the client
     * address or the e-mail has `loginMaxFailures` failures in the window; a wrong e-mail and a wrong
     * password are the same `invalid_credentials`, and take the same time.
     */
    async login(input: { email: string; password: string; clientIp: string }): Promise<OpenedSession> {
      const email = input.email.trim().toLowerCase()
      const keys = [`ip:${input.clientIp}`, `email:${email}`]
      const wait = throttle.retryAfterSeconds(keys)
      if (wait > 0) {
        throw new AppError('throttled', `Request was throttled. Expected available in ${wait} seconds.`, null, { retryAfterSeconds: wait })
      }
      const found = await store.findCredentials(email)
      const ok = await verifyPassword(input.password, found?.passwordHash ?? null)
      if (!found || !ok) {
        throttle.recordFailure(keys)
        deps.changes?.publish({ kind: 'login-failure', keys })
        throw new AppError('invalid_credentials', 'Invalid email or password.')
      }
      throttle.clear(`email:${email}`)
      deps.changes?.publish({ kind: 'login-success', key: `email:${email}` })
      return openSession(found.user)
    },

    /**
     * The user of a session token, or null (unknown, expired, or the user left the organization).
     * `extended`: the expiry was pushed back now, so the cookie should be sent again.
     */
    async authenticateSession(token: string): Promise<{ user: User; extended: boolean } | null> {
      const session = await store.findSession(hashSecret(token), now())
      if (!session) return null
      const fresh = clock.now() + settings.sessionTtlMs
      const extended = fresh - session.expiresAt.getTime() > EXTEND_EVERY_MS
      if (extended) await store.extendSession(session.id, new Date(fresh))
      return { user: session.user, extended }
    },

    async logout(token: string): Promise<void> {
      await store.deleteSession(hashSecret(token))
    },

    /** Sets a new password after checking the current one; every session of the user ends. */
    async changePassword(user: User, input: { currentPassword: string | null; password: string }): Promise<void> {
      const stored = await store.findCredentials(user.email.toLowerCase())
      if (stored?.passwordHash && !(await verifyPassword(input.currentPassword ?? '', stored.passwordHash))) {
        throw validationError('current_password', 'Your current password is incorrect. Please try again.', 'incorrect_password')
      }
      await store.setPassword(user.id, await hashPassword(readNewPassword(input.password)))
    },

    openSession,

    async rename(user: User, firstName: string): Promise<User> {
      const renamed = await store.setFirstName(user.id, firstName)
      projects.forgetPersonalKeysOf(user.id) // cached with the old name
      return renamed
    },

    createSetupToken,

    /** A set-up link token for the user with this e-mail (`tally users setup-link`). */
    async createSetupTokenFor(email: string): Promise<string> {
      const user = await store.findUserByEmail(email.trim().toLowerCase())
      if (!user) throw new AppError('not_found', `No user has the e-mail ${email}.`)
      return createSetupToken(user.id)
    },

    async isSetupTokenValid(token: string): Promise<boolean> {
      return (await store.findSetupToken(hashSecret(token), now())) !== null
    },

    /** Uses a set-up token: the user's e-mail, name and password are set, and they are signed in. */
    async completeSetup(input: { token: string; email: string; password: string; firstName: string }): Promise<OpenedSession> {
      const passwordHash = await hashPassword(readNewPassword(input.password))
      const user = await store.completeSetup(hashSecret(input.token), now(), {
        email: input.email.toLowerCase(),
        firstName: input.firstName,
        passwordHash,
      })
      if (!user) throw validationError('token', 'This set-up link is invalid, expired or already used.', 'invalid_token')
      projects.forgetPersonalKeysOf(user.id) // cached with the old e-mail
      return openSession(user)
    },

    /**
     * `tally users create`: a user of the first organization at `level`, with a password, or else a
     * set-up link token for them to choose one.
     */
    async createAccount(input: { email: string; firstName: string; password: string | null; level: MembershipLevel }) {
      const owner = await projects.firstUser()
      if (!owner) throw new AppError('not_found', 'Tally has not been initialised.')
      const passwordHash = input.password === null ? null : await hashPassword(readNewPassword(input.password))
      const user = await store.createAccount(owner.organizationId, { email: input.email.toLowerCase(), firstName: input.firstName, passwordHash, level: input.level })
      const setupToken = input.password === null ? await createSetupToken(user.id) : null
      return { user, setupToken }
    },

    /** What `/api/users/@me/` shows besides the user: organization, level, current project. */
    async describe(user: User): Promise<{ membership: Membership; team: Project | null; projects: Project[]; hasPassword: boolean }> {
      const membership = await membershipOf(user)
      const mine = await projects.listProjectsOfUser(user.id)
      const team = mine.find((p) => p.id === user.currentProjectId) ?? mine[0] ?? null
      return { membership, team, projects: mine, hasPassword: await store.hasPassword(user.id) }
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
