// npm run bench:geoip — CPU of the ingestion worker's GeoIP step per event, against a ceiling measured in
// the same run: parsing and re-serialising the same properties (what any step that adds properties pays).
// Events carry public addresses drawn from BENCH_GEOIP_ADDRESSES (default 5,000) distinct ones, so the
// reader's cache (10,000 locations) is warm as it is for a site's returning visitors; BENCH_GEOIP_EVENTS
// (default 200,000) events, in micro-batches of 10,000. Not a test: it prints.
import { createGeoIpStep } from '../src/ingestion/steps/geoip-step.ts'
import type { StoredEvent } from '../src/ingestion/event-store.ts'
import { createMmdbGeoIpLookup } from '../src/storage/mmdb/mmdb-geoip-lookup.ts'

const EVENTS = Number(process.env.BENCH_GEOIP_EVENTS ?? 200_000)
const ADDRESSES = Number(process.env.BENCH_GEOIP_ADDRESSES ?? 5_000)
const BATCH = 10_000

function publicAddress(i: number): string {
  // Spread over the public IPv4 space, skipping 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16 and 224+.
  const a = [1, 2, 5, 8, 23, 31, 37, 41, 45, 46, 49, 62, 77, 81, 89, 91, 103, 110, 121, 151, 175, 185, 195, 201, 212, 216][i % 26]!
  return `${a}.${(i * 7) % 256}.${(i * 13) % 256}.${(i * 31) % 254 + 1}`
}

function makeBatch(offset: number): StoredEvent[] {
  const out: StoredEvent[] = []
  for (let i = 0; i < BATCH; i++) {
    const n = offset + i
    const properties = JSON.stringify({
      $ip: publicAddress(n % ADDRESSES), $current_url: `https://shop.example/p/${n % 500}`, $browser: 'Chrome', $os: 'Mac OS X',
      $device_type: 'Desktop', $session_id: `s-${n % 9000}`, $lib: 'web', $lib_version: '1.200.0', $screen_width: 1440, $referrer: '$direct',
    })
    out.push({ uuid: `u${n}`, projectId: 1, event: '$pageview', distinctId: `d${n % 9000}`, properties, elementsChain: '', timestamp: new Date(), createdAt: new Date(), personId: null } as StoredEvent)
  }
  return out
}

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

const step = createGeoIpStep({ geoip: createMmdbGeoIpLookup(), settingsOf: async () => ({ geoipEnabled: true, anonymizeIps: false }) })
await step.run(makeBatch(0)) // opens the file and warms the cache
// Each batch is made just before it is used (as the worker gets them), the ceiling and the step on alternate
// batches of the same shape, so both pay the same garbage collection.
const rounds = Math.ceil(EVENTS / BATCH)
let ceiling = 0
let geoip = 0
let located = 0
for (let k = 0; k < rounds; k++) {
  const a = makeBatch(k * BATCH)
  let t0 = cpuMs()
  for (const e of a) JSON.stringify({ ...(JSON.parse(e.properties) as object), $geoip_country_code: 'XX' })
  ceiling += cpuMs() - t0
  const b = makeBatch(k * BATCH)
  t0 = cpuMs()
  const results = await step.run(b)
  // The persons step then parses the longer text (the step hands on no parsed object): counted here.
  for (const r of results) if (r.kind === 'ok') JSON.parse(r.value.properties)
  geoip += cpuMs() - t0
  for (const r of results) if (r.kind === 'ok' && r.value.properties.includes('$geoip_country_code')) located++
}

const events = rounds * BATCH
console.log(`events: ${events}, distinct addresses: ${ADDRESSES}, located: ${located}`)
console.log(`ceiling (parse + add a key + serialise): ${((ceiling * 1000) / events).toFixed(2)} µs CPU/event`)
console.log(`geoip step + the next step's parse:       ${((geoip * 1000) / events).toFixed(2)} µs CPU/event  (${(geoip / ceiling).toFixed(2)}x the ceiling)`)
console.log(`rss: ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB (the IPv4 file is 63 MB)`)
