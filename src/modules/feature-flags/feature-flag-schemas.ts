import { has, readBool, readChoice, readObject, readString, readTags, type Body } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'

export const RUNTIMES = ['server', 'client', 'all'] as const
const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/

/** The fields a flag create/update body sent, read with DRF's field rules; absent fields stay undefined. */
export interface FlagBody {
  key?: string
  name?: string
  /** Shape-checked as an object only: the service validates conditions against the project's cohorts and flags. */
  filters?: Record<string, unknown>
  rolloutPercentage?: unknown
  active?: boolean
  deleted?: boolean
  ensureExperienceContinuity?: boolean
  tags?: string[]
  evaluationRuntime?: (typeof RUNTIMES)[number]
}

/** `key`: required on create, non-blank, letters/digits/`-`/`_` only (PostHog's FeatureFlagSerializer). */
function readKey(v: unknown): string {
  const key = readString(v, 'key', { maxLength: 400, trim: false })!
  if (!KEY_PATTERN.test(key)) throw validationError('key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.', 'invalid_key')
  return key
}

/** A feature flag create/update body as PostHog's serializer reads it. */
export function parseFlagBody(body: Body, opts: { create: boolean }): FlagBody {
  const out: FlagBody = {}
  if (has(body, 'key')) out.key = readKey(body.key)
  else if (opts.create) throw validationError('key', 'This field is required.', 'required')
  if (has(body, 'name')) out.name = readString(body.name, 'name', { allowBlank: true, trim: false })!
  if (has(body, 'filters')) out.filters = readObject(body.filters, 'filters')!
  if (has(body, 'rollout_percentage')) out.rolloutPercentage = body.rollout_percentage
  if (has(body, 'active')) out.active = readBool(body.active, 'active')
  if (has(body, 'deleted')) out.deleted = readBool(body.deleted, 'deleted')
  if (has(body, 'ensure_experience_continuity')) out.ensureExperienceContinuity = readBool(body.ensure_experience_continuity, 'ensure_experience_continuity')
  if (has(body, 'tags')) out.tags = readTags(body.tags)
  if (has(body, 'evaluation_runtime')) out.evaluationRuntime = readChoice(body.evaluation_runtime, 'evaluation_runtime', RUNTIMES)!
  return out
}
