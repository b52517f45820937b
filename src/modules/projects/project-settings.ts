/**
 * PostHog's project (Team) settings that posthog-js reads through remote config and that Tally
 * honours, by their PostHog names (`capture_console_log_opt_in` belongs to the replay settings, which
 * send it inside `sessionRecording`). One table: the store's columns, the project JSON, PATCH and the
 * remote config all derive from it. Each is a nullable boolean, as in PostHog (null reads as off).
 */
export const SDK_SETTING_KEYS = [
  'autocapture_opt_out',
  'autocapture_exceptions_opt_in',
  'autocapture_web_vitals_opt_in',
  'capture_performance_opt_in',
  'capture_dead_clicks',
  'heatmaps_opt_in',
] as const

export type SdkSettingKey = (typeof SDK_SETTING_KEYS)[number]
export type SdkSettings = Readonly<Record<SdkSettingKey, boolean | null>>

/** The settings of a project PostHog creates (Team model defaults). */
export const DEFAULT_SDK_SETTINGS: SdkSettings = Object.freeze({
  autocapture_opt_out: null,
  autocapture_exceptions_opt_in: null,
  autocapture_web_vitals_opt_in: null,
  capture_performance_opt_in: true,
  capture_dead_clicks: false,
  heatmaps_opt_in: null,
})

/** A stored row's settings (columns named as the keys). */
export function sdkSettingsOfRow(row: Record<string, unknown>): SdkSettings {
  const settings = {} as Record<SdkSettingKey, boolean | null>
  for (const key of SDK_SETTING_KEYS) settings[key] = typeof row[key] === 'boolean' ? (row[key] as boolean) : null
  return Object.freeze(settings)
}
