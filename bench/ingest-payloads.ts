import { gzipSync } from 'node:zlib'

/** Properties posthog-js 1.4xx puts on a $pageview (about 1 KB of JSON). */
export function browserProperties(token: string, i: number): Record<string, unknown> {
  return {
    token,
    distinct_id: `01903a5e-6c4b-7c3d-9a1e-${String(i % 5000).padStart(12, '0')}`,
    $device_id: `01903a5e-6c4b-7c3d-9a1e-${String(i % 5000).padStart(12, '0')}`,
    $session_id: '01903a5e-7d2f-7e41-b3c5-2f0a9d8e1c11',
    $window_id: '01903a5e-7d2f-7e41-b3c5-3a1b2c3d4e5f',
    $pageview_id: '01903a5e-8e3a-7f52-c4d6-4b2c3d4e5f60',
    $os: 'Mac OS X',
    $os_version: '14.5.0',
    $browser: 'Chrome',
    $browser_version: 126,
    $device_type: 'Desktop',
    $current_url: `https://app.example.com/projects/42/insights?tab=trends&i=${i}`,
    $host: 'app.example.com',
    $pathname: '/projects/42/insights',
    $raw_user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    $screen_height: 1117,
    $screen_width: 1728,
    $viewport_height: 992,
    $viewport_width: 1728,
    $lib: 'web',
    $lib_version: '1.449.2',
    $insert_id: `x${i.toString(36)}abcdef`,
    $time: 1719830000.123,
    $referrer: 'https://www.google.com/',
    $referring_domain: 'www.google.com',
    $initial_referrer: '$direct',
    $initial_referring_domain: '$direct',
    $is_identified: false,
    $process_person_profile: true,
    $configured_session_timeout_ms: 1800000,
    $active_feature_flags: ['beta-dashboard', 'new-onboarding'],
    '$feature/beta-dashboard': true,
    '$feature/new-onboarding': 'control',
    $feature_flag_payloads: {},
    $recording_status: 'active',
    $sdk_debug_replay_internal_buffer_length: 0,
    $timezone: 'Europe/Berlin',
    $browser_language: 'en-US',
    $browser_language_prefix: 'en',
    title: 'Insights • Example',
    utm_source: 'newsletter',
  }
}

/** A posthog-js style `/batch/` body of `n` events, gzipped (no uuids: the server makes UUIDv7s). */
export function gzipBatchBody(token: string, n: number, seed: number): Buffer {
  const now = Date.now()
  const batch = Array.from({ length: n }, (_, k) => ({
    event: k % 10 === 0 ? '$autocapture' : '$pageview',
    timestamp: new Date(now - (n - k) * 10).toISOString(),
    properties: browserProperties(token, seed * n + k),
  }))
  return gzipSync(JSON.stringify({ api_key: token, batch, sent_at: new Date(now).toISOString() }))
}

/** One posthog-js style event as `/e/` receives it, plain JSON. */
export function singleEventBody(token: string, i: number): string {
  return JSON.stringify({ event: '$pageview', timestamp: new Date().toISOString(), properties: browserProperties(token, i) })
}

/** Distinct users of the persons-heavy run (issue 9's benchmark: 100,000). */
export const PERSONS_HEAVY_USERS = 100_000

/**
 * A `/batch/` body for the persons-heavy run, gzipped: users drawn from 100,000 distinct ids, one event
 * in ten carrying `$set` (and `$set_once`), one in a hundred an `$identify` of an anonymous id onto its user.
 */
export function gzipPersonsHeavyBody(token: string, n: number, seed: number): Buffer {
  const now = Date.now()
  const batch = Array.from({ length: n }, (_, k) => {
    const i = seed * n + k
    const user = `user-${(i * 7919) % PERSONS_HEAVY_USERS}`
    const properties: Record<string, unknown> = { ...browserProperties(token, i), distinct_id: user, $device_id: user }
    const timestamp = new Date(now - (n - k) * 10).toISOString()
    if (i % 100 === 0) {
      return { event: '$identify', timestamp, properties: { ...properties, $anon_distinct_id: `anon-${i}`, $set: { email: `${user}@example.com` } } }
    }
    if (i % 10 === 0) properties.$set = { plan: i % 20 === 0 ? 'pro' : 'free', seats: i % 50 }
    if (i % 10 === 0) properties.$set_once = { first_seen_seed: seed }
    return { event: i % 10 === 5 ? '$autocapture' : '$pageview', timestamp, properties }
  })
  return gzipSync(JSON.stringify({ api_key: token, batch, sent_at: new Date(now).toISOString() }))
}
