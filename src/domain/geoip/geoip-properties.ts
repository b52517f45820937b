/**
 * GeoIP as PostHog's GeoIP transformation applies it (plugin-server `posthog-plugin-geoip`): the
 * location of the event's `$ip` becomes `$geoip_*` event properties, `$set` on the person (so the
 * person shows where they were last) and `$set_once` as `$initial_geoip_*` (where they were first).
 * Pure: the look-up itself is a port (GeoIpLookup), implemented over an MMDB file in storage/mmdb.
 */

/** Where an address is, in PostHog's vocabulary (every field optional: databases differ in what they know). */
export interface GeoLocation {
  cityName?: string
  countryCode?: string
  countryName?: string
  continentCode?: string
  continentName?: string
  postalCode?: string
  latitude?: number
  longitude?: number
  accuracyRadius?: number
  timeZone?: string
  /** First-level (state, region) then second-level subdivisions; `code` without the country prefix ("CA"). */
  subdivisions: ReadonlyArray<{ code?: string; name?: string }>
}

/** The port: a location for a public address, null when the database has none (or the text is no IP). */
export interface GeoIpLookup {
  /** Resolves once what `locate` needs for these addresses is loaded (at once after the first time). */
  prepare(ips: Iterable<string>): Promise<void>
  /** Null for an internal address, one the database does not know, or one not prepared. */
  locate(ip: string): GeoLocation | null
}

/** Every key PostHog's transformation knows, nulled in `$set`/`$set_once` first so stale values do not survive. */
const LOCATION_KEYS = [
  'city_name', 'city_confidence', 'subdivision_2_name', 'subdivision_2_code', 'subdivision_1_name', 'subdivision_1_code',
  'country_name', 'country_code', 'continent_name', 'continent_code', 'postal_code', 'latitude', 'longitude',
  'accuracy_radius', 'time_zone',
] as const

/** The person properties /decide adds from the request's address (posthog/geoip.py VALID_GEOIP_PROPERTIES). */
const DECIDE_KEYS = ['city_name', 'country_name', 'country_code', 'continent_name', 'continent_code', 'postal_code', 'time_zone'] as const

/** The location as PostHog's transformation names it (without the `$geoip_` prefix), only what is known. */
export function locationFields(loc: GeoLocation): Record<string, string | number> {
  const out: Record<string, string | number> = {}
  const put = (key: string, value: string | number | undefined) => {
    if (value !== undefined && value !== '') out[key] = value
  }
  put('city_name', loc.cityName)
  put('country_name', loc.countryName)
  put('country_code', loc.countryCode)
  put('continent_name', loc.continentName)
  put('continent_code', loc.continentCode)
  put('postal_code', loc.postalCode)
  put('latitude', round4(loc.latitude))
  put('longitude', round4(loc.longitude))
  put('accuracy_radius', loc.accuracyRadius)
  put('time_zone', loc.timeZone)
  loc.subdivisions.forEach((s, i) => {
    put(`subdivision_${i + 1}_code`, s.code)
    put(`subdivision_${i + 1}_name`, s.name)
  })
  return out
}

/** The address GeoIP reads: `properties.$ip` (capture sets it from the request unless the client did). */
export function geoIpAddressOf(properties: Record<string, unknown>): string | null {
  if (properties.$geoip_disable === true || properties.$geoip_disable === 'true') return null
  const ip = properties.$ip
  if (typeof ip === 'string' && ip !== '') return ip
  return null
}

/**
 * The event's properties with its location added, as a new object (the input is not changed):
 * `$geoip_<key>` on the event, `$set.$geoip_<key>` and `$set_once.$initial_geoip_<key>` for the
 * person. Every known key is first nulled in `$set`/`$set_once` (a client's own `$set` wins over
 * those nulls, the location wins over both), as PostHog's transformation does.
 */
export function withLocation(properties: Record<string, unknown>, loc: GeoLocation): Record<string, unknown> {
  const fields = locationFields(loc)
  const set: Record<string, unknown> = {}
  const setOnce: Record<string, unknown> = {}
  for (const key of LOCATION_KEYS) {
    set[`$geoip_${key}`] = null
    setOnce[`$initial_geoip_${key}`] = null
  }
  Object.assign(set, asObject(properties.$set))
  Object.assign(setOnce, asObject(properties.$set_once))
  const out: Record<string, unknown> = { ...properties }
  for (const [key, value] of Object.entries(fields)) {
    out[`$geoip_${key}`] = value
    set[`$geoip_${key}`] = value
    setOnce[`$initial_geoip_${key}`] = value
  }
  out.$set = set
  out.$set_once = setOnce
  return out
}

/** The `$geoip_*` person properties /decide evaluates flags with (supplied person properties win over them). */
export function decidePersonProperties(loc: GeoLocation): Record<string, string | number> {
  const fields = locationFields(loc)
  const out: Record<string, string | number> = {}
  for (const key of DECIDE_KEYS) if (fields[key] !== undefined) out[`$geoip_${key}`] = fields[key]!
  return out
}

function asObject(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
}

/** Coordinates to 4 decimals (~11 m): float32 databases would otherwise answer 37.422000885009766. */
function round4(v: number | undefined): number | undefined {
  return v === undefined ? undefined : Math.round(v * 1e4) / 1e4
}
