import { has, readChoice, readString, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'
import { LEVELS, type MembershipLevel } from './auth-types.ts'

const EMAIL = /^[^\s@]+@[^\s@]+$/
// Long enough for any real password; bounds the work a request can ask of the hash.
const MAX_PASSWORD = 1024

function required(body: Body, key: string): unknown {
  if (!has(body, key) || body[key] === undefined) throw validationError(key, 'This field is required.', 'required')
  return body[key]
}

function readEmail(v: unknown, attr: string): string {
  const email = readString(v, attr, { maxLength: 254 })!
  if (!EMAIL.test(email)) throw validationError(attr, 'Enter a valid email address.', 'invalid')
  return email.toLowerCase()
}

function readPassword(v: unknown, attr = 'password'): string {
  return readString(v, attr, { trim: false, maxLength: MAX_PASSWORD })!
}

function readFirstName(body: Body): string {
  return readString(required(body, 'first_name'), 'first_name', { maxLength: 150 })!
}

/** `POST /api/login/`: `{email, password}` (the e-mail is not checked for shape: a wrong one simply fails). */
export function parseLogin(body: Body): { email: string; password: string } {
  return {
    email: readString(required(body, 'email'), 'email', { maxLength: 254 })!,
    password: readPassword(required(body, 'password')),
  }
}

/** `POST /api/setup/`: `{token, email, password, first_name}`. */
export function parseSetup(body: Body): { token: string; email: string; password: string; firstName: string } {
  return {
    token: readString(required(body, 'token'), 'token', { maxLength: 200 })!,
    email: readEmail(required(body, 'email'), 'email'),
    password: readPassword(required(body, 'password')),
    firstName: readFirstName(body),
  }
}

/** `POST /api/signup/`: `{invite_token, email?, password, first_name}`. */
export function parseSignup(body: Body): { inviteToken: string; email: string | null; password: string; firstName: string } {
  return {
    inviteToken: readString(required(body, 'invite_token'), 'invite_token', { maxLength: 200 })!,
    email: has(body, 'email') && body.email !== null && body.email !== '' ? readEmail(body.email, 'email') : null,
    password: readPassword(required(body, 'password')),
    firstName: readFirstName(body),
  }
}

/** `PATCH /api/users/@me/`: `first_name`, and `password` with `current_password`. */
export function parseMePatch(body: Body): { firstName?: string; password?: string; currentPassword: string | null } {
  const out: { firstName?: string; password?: string; currentPassword: string | null } = { currentPassword: null }
  if (has(body, 'first_name')) out.firstName = readString(body.first_name, 'first_name', { maxLength: 150 })!
  if (has(body, 'password')) out.password = readPassword(body.password)
  if (has(body, 'current_password')) out.currentPassword = readPassword(body.current_password, 'current_password')
  return out
}

function readLevel(v: unknown): MembershipLevel {
  return readChoice(v, 'level', LEVELS)!
}

/** `POST .../invites/`: `{target_email, level?}` (default member). */
export function parseInvite(body: Body): { targetEmail: string; level: MembershipLevel } {
  return {
    targetEmail: readEmail(required(body, 'target_email'), 'target_email'),
    level: has(body, 'level') ? readLevel(body.level) : 1,
  }
}

/** `PATCH .../members/:user_uuid/`: `{level}`. */
export function parseMemberLevel(body: Body): MembershipLevel {
  return readLevel(required(body, 'level'))
}

/** `POST /api/personal_api_keys/`: `{label}`. */
export function parsePersonalKey(body: Body): { label: string } {
  return { label: readString(required(body, 'label'), 'label', { maxLength: 40 })! }
}
