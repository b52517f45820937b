/**
 * The private API's JSON shapes, defined once by the functions that write them and imported
 * (type-only) by the web app in `web/`, so server and client cannot drift apart. Only types here:
 * nothing of this file reaches the browser bundle.
 */
import type { toActionJson } from '../modules/actions/action-routes.ts'
import type { toCohortJson } from '../modules/cohorts/cohort-routes.ts'
import type { toDashboardJson, toDashboardListJson } from '../modules/dashboards/dashboard-json.ts'
import type { toEventJson } from '../modules/events/event-json.ts'
import type { toFlagJson } from '../modules/feature-flags/feature-flag-routes.ts'
import type { toGroupTypeJson } from '../modules/group-types/group-type-routes.ts'
import type { toInsightJson } from '../modules/insights/insight-json.ts'
import type { toProjectJson } from '../modules/projects/project-routes.ts'
import type { toDeadLetterJson } from '../modules/dead-letters/dead-letter-routes.ts'
import type { replayDeadLetters } from '../ingestion/replay-dead-letters.ts'
import type { FlagFilters } from '../domain/flags/flag-types.ts'
import type { toMeJson, toPersonalKeyJson } from '../modules/auth/user-routes.ts'
import type { toPersonDetailJson, toPersonJson } from '../modules/persons/person-json.ts'
import type { toRecordingJson } from '../modules/replay/recording-routes.ts'
import type { toGroupJson } from '../modules/groups/group-routes.ts'
// The route files read `req.user`/`req.project`, declared there: loaded so this file typechecks alone (web/tsconfig.json).
import type {} from './private-scope.ts'

export type ActionJson = ReturnType<typeof toActionJson>
export type ActionStepJson = ActionJson['steps'][number]
export type CohortJson = ReturnType<typeof toCohortJson>
export type DashboardListJson = ReturnType<typeof toDashboardListJson>
export type DashboardJson = ReturnType<typeof toDashboardJson>
export type TileJson = DashboardJson['tiles'][number]
export type EventJson = ReturnType<typeof toEventJson>
export type FlagJson = ReturnType<typeof toFlagJson>
export type { FlagFilters }
export type GroupTypeJson = ReturnType<typeof toGroupTypeJson>
export type InsightJson = ReturnType<typeof toInsightJson>
export type ProjectJson = ReturnType<typeof toProjectJson>
export type DeadLetterJson = ReturnType<typeof toDeadLetterJson>
export type MeJson = ReturnType<typeof toMeJson>
export type PersonalKeyJson = ReturnType<typeof toPersonalKeyJson> & { value?: string }
export type PersonJson = ReturnType<typeof toPersonJson>
export type PersonDetailJson = ReturnType<typeof toPersonDetailJson>
export type GroupJson = ReturnType<typeof toGroupJson>
export type ReplayJson = Awaited<ReturnType<typeof replayDeadLetters>>

/** PostHog's list envelope (`paginate` in http/pagination.ts). */
export interface ListJson<T> {
  count: number
  next: string | null
  previous: string | null
  results: T[]
}

/** A page without a count (events, persons, groups): PostHog's cursor/offset links. */
export interface CursorListJson<T> {
  next: string | null
  previous?: string | null
  results: T[]
}

/** The events list: a cursor page without a count. */
export interface EventListJson {
  next: string | null
  results: EventJson[]
}
export type RecordingJson = ReturnType<typeof toRecordingJson>
export interface RecordingListJson {
  results: RecordingJson[]
  has_next: boolean
}
