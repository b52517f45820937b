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
  /** Loads what `locate` needs for these addresses: a promise while a file is read, undefined when all is ready. */
  prepare(ips: Iterable<string>): Promise<void> | undefined
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
 * `$set` / `$set_once` with every known key null, as object literals: each call makes an object of one
 * fixed shape, so the location's values are written in place (profiled: building these from computed
 * keys made dictionary-mode objects and doubled the step's cost).
 */
const nullSet = (): Record<string, unknown> => ({ $geoip_city_name: null, $geoip_city_confidence: null, $geoip_subdivision_2_name: null, $geoip_subdivision_2_code: null, $geoip_subdivision_1_name: null, $geoip_subdivision_1_code: null, $geoip_country_name: null, $geoip_country_code: null, $geoip_continent_name: null, $geoip_continent_code: null, $geoip_postal_code: null, $geoip_latitude: null, $geoip_longitude: null, $geoip_accuracy_radius: null, $geoip_time_zone: null })
const nullSetOnce = (): Record<string, unknown> => ({ $initial_geoip_city_name: null, $initial_geoip_city_confidence: null, $initial_geoip_subdivision_2_name: null, $initial_geoip_subdivision_2_code: null, $initial_geoip_subdivision_1_name: null, $initial_geoip_subdivision_1_code: null, $initial_geoip_country_name: null, $initial_geoip_country_code: null, $initial_geoip_continent_name: null, $initial_geoip_continent_code: null, $initial_geoip_postal_code: null, $initial_geoip_latitude: null, $initial_geoip_longitude: null, $initial_geoip_accuracy_radius: null, $initial_geoip_time_zone: null })

/** A location's properties, keys already named (`$geoip_x` for the event and `$set`, `$initial_geoip_x` for `$set_once`). */
interface LocationEntries {
  readonly names: readonly string[]
  readonly initialNames: readonly string[]
  readonly values: ReadonlyArray<string | number>
  /** `"$geoip_x":v,...,"$set":{...},"$set_once":{...}}`: what the JSON text of properties without `$set`, `$set_once` or `$geoip_*` gets. */
  readonly jsonTail: string
  /** The keys the location adds, joined: the same for every place whose database record has the same fields. */
  readonly change: string
}

/** Entries per location object: a reader that hands out the same object for the same place names them once. */
const entriesOf = new WeakMap<GeoLocation, LocationEntries>()

function locationEntries(loc: GeoLocation): LocationEntries {
  let entries = entriesOf.get(loc)
  if (entries === undefined) {
    const fields = Object.entries(locationFields(loc))
    const names = fields.map(([k]) => `$geoip_${k}`)
    const initialNames = fields.map(([k]) => `$initial_geoip_${k}`)
    const values = fields.map(([, v]) => v)
    const set = nullSet()
    const setOnce = nullSetOnce()
    names.forEach((n, i) => (set[n] = values[i]))
    initialNames.forEach((n, i) => (setOnce[n] = values[i]))
    const own = names.map((n, i) => `${JSON.stringify(n)}:${JSON.stringify(values[i])}`)
    const jsonTail = `${[...own, `"$set":${JSON.stringify(set)}`, `"$set_once":${JSON.stringify(setOnce)}`].join(',')}}`
    entries = { names, initialNames, values, jsonTail, change: fields.map(([k]) => k).join(',') }
    entriesOf.set(loc, entries)
  }
  return entries
}

/**
 * The event's properties with its location added, as a new object (the input is not changed):
 * `$geoip_<key>` on the event, `$set.$geoip_<key>` and `$set_once.$initial_geoip_<key>` for the
 * person. Every known key is first nulled in `$set`/`$set_once` (a client's own `$set` wins over
 * those nulls, the location wins over both), as PostHog's transformation does.
 */
export function withLocation(properties: Record<string, unknown>, loc: GeoLocation): Record<string, unknown> {
  const { names, initialNames, values } = locationEntries(loc)
  const clientSet = properties.$set
  const clientSetOnce = properties.$set_once
  const set = nullSet()
  if (isObject(clientSet)) Object.assign(set, clientSet)
  const setOnce = nullSetOnce()
  if (isObject(clientSetOnce)) Object.assign(setOnce, clientSetOnce)
  const out: Record<string, unknown> = { ...properties }
  for (let i = 0; i < names.length; i++) {
    out[names[i]!] = values[i]
    set[names[i]!] = values[i]
    setOnce[initialNames[i]!] = values[i]
  }
  out.$set = set
  out.$set_once = setOnce
  return out
}

/**
 * `JSON.stringify(withLocation(properties, loc))` for `text`, the JSON text `properties` was parsed
 * from. Most events (page views) carry no `$set`, `$set_once` or `$geoip_*` of their own: their text
 * gets the location's JSON appended, made once per location (profiled: building and serialising the
 * objects per event cost ~35 µs, 7x a parse; appending costs ~1 µs). Other events take the long way.
 * `properties` needs only those keys (`$set`, `$set_once`, `$geoip_*`) when `all` gives the whole
 * object for the long way.
 */
export function withLocationText(text: string, properties: Record<string, unknown>, loc: GeoLocation, all: () => Record<string, unknown> = () => properties): string {
  const entries = locationEntries(loc)
  if (text.charCodeAt(text.length - 1) === 0x7d /* } */ && !Object.hasOwn(properties, '$set') && !Object.hasOwn(properties, '$set_once') && !entries.names.some((n) => Object.hasOwn(properties, n))) {
    const body = text.slice(0, -1).trimEnd()
    return `${body}${body.endsWith('{') ? '' : ','}${entries.jsonTail}`
  }
  return JSON.stringify(withLocation(all(), loc))
}

/** Names the keys `withLocation` adds for `loc`: equal for two places exactly when they add the same keys. */
export function locationChange(loc: GeoLocation): string {
  return locationEntries(loc).change
}

/** The `$geoip_*` person properties /decide evaluates flags with (supplied person properties win over them). */
export function decidePersonProperties(loc: GeoLocation): Record<string, string | number> {
  const fields = locationFields(loc)
  const out: Record<string, string | number> = {}
  for (const key of DECIDE_KEYS) if (fields[key] !== undefined) out[`$geoip_${key}`] = fields[key]!
  return out
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** Coordinates to 4 decimals (~11 m): float32 databases would otherwise answer 37.422000885009766. */
function round4(v: number | undefined): number | undefined {
  return v === undefined ? undefined : Math.round(v * 1e4) / 1e4
}
