import type { SdkSettings } from './project-settings.ts'
import type { RecordingSettings } from '../../domain/replay/recording-settings.ts'

/** A user of Tally (PostHog's User): the `created_by` of records is their summary. */
export interface User {
  id: number
  uuid: string
  distinctId: string
  firstName: string
  lastName: string
  email: string
  isEmailVerified: boolean
  organizationId: number
  currentProjectId: number | null
}

export interface Organization {
  id: number
  uuid: string
  name: string
}

export interface Project {
  id: number
  uuid: string
  organizationId: number
  organizationUuid: string
  name: string
  apiToken: string
  timezone: string
  /** Session replay settings (session_recording_opt_in and the rest). */
  sessionRecording: RecordingSettings
  /** PostHog's `slack_incoming_webhook`: where actions with `post_to_chat` send their messages (null: nowhere). */
  slackIncomingWebhook: string | null
  /** Days of events kept (`event_retention_days`); null: forever. */
  eventRetentionDays: number | null
  /** PostHog's `test_account_filters`: property filters that "filter out internal and test users" applies (`filterTestAccounts`). */
  testAccountFilters: unknown[]
  /** PostHog's `path_cleaning_filters`: `{alias, regex}` rules paths apply with `pathReplacements`. */
  pathCleaningFilters: unknown[]
  /** PostHog's `anonymize_ips`: events are stored without `$ip` (GeoIP still reads it first). */
  anonymizeIps: boolean
  /** `geoip_enabled`: the worker adds the `$geoip_*` location of `$ip` to each event and its person. */
  geoipEnabled: boolean
  createdAt: Date
  updatedAt: Date
  /** PostHog's settings that posthog-js reads through remote config (frozen; replaced on change). */
  settings: SdkSettings
}

/** The person summary PostHog returns as `created_by`. */
export function toUserSummary(u: User) {
  return {
    id: u.id,
    uuid: u.uuid,
    distinct_id: u.distinctId,
    first_name: u.firstName,
    last_name: u.lastName,
    email: u.email,
    is_email_verified: u.isEmailVerified,
  }
}
export type UserSummary = ReturnType<typeof toUserSummary>
