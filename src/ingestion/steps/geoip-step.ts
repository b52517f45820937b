import { geoIpAddressOf, locationChange, withLocation, withLocationText, type GeoIpLookup, type GeoLocation } from '../../domain/geoip/geoip-properties.ts'
import type { StoredEvent } from '../event-store.ts'
import { propertiesOf } from '../event-properties.ts'
import { mixShape, stepPropertiesOf, withRewrittenProperties } from '../step-properties.ts'
import { dlq, ok, type BatchStep, type StepResult } from '../results.ts'

export interface GeoIpStepDeps {
  /** Null when GeoIP is off for the whole deployment (`TALLY_GEOIP=off`): only `anonymize_ips` applies. */
  geoip: GeoIpLookup | null
  /** The project's `geoip_enabled` and `anonymize_ips` (cached by the project service). */
  settingsOf(projectId: number): Promise<{ geoipEnabled: boolean; anonymizeIps: boolean } | null>
}

/**
 * PostHog's GeoIP transformation, then its `anonymize_ips`, per micro-batch, before person processing:
 * an event whose `$ip` is a public address gets `$geoip_*` properties and its person `$set`
 * `$geoip_*` / `$set_once` `$initial_geoip_*` (domain/geoip); `$geoip_disable: true` on the event or
 * the project's `geoip_enabled: false` skip it. Then, for a project with `anonymize_ips`, `$ip` is
 * removed, so the location is kept and the address is not. Events it does not change keep their
 * properties text as it came (no serialisation); the parsed object is handed on to the next step.
 */
export function createGeoIpStep(deps: GeoIpStepDeps): BatchStep<StoredEvent, StoredEvent> {
  return {
    name: 'geoip',
    async run(batch) {
      const settings = new Map<number, { geoipEnabled: boolean; anonymizeIps: boolean } | null>()
      for (const e of batch) if (!settings.has(e.projectId)) settings.set(e.projectId, await deps.settingsOf(e.projectId))
      const results: StepResult<StoredEvent>[] = new Array(batch.length)
      const addresses: Array<string | null> = new Array(batch.length).fill(null)
      for (let i = 0; i < batch.length; i++) {
        const e = batch[i]!
        const s = settings.get(e.projectId)
        if (!s || (!s.anonymizeIps && (!s.geoipEnabled || deps.geoip === null))) continue
        try {
          const properties = stepPropertiesOf(e)
          if (s.geoipEnabled && deps.geoip !== null) addresses[i] = geoIpAddressOf(properties)
        } catch (err) {
          results[i] = dlq('unreadable_properties', err)
        }
      }
      if (deps.geoip !== null) await deps.geoip.prepare(addresses.filter((a): a is string => a !== null))
      for (let i = 0; i < batch.length; i++) {
        if (results[i]) continue
        const e = batch[i]!
        const s = settings.get(e.projectId)
        const ip = addresses[i]
        const location = ip !== null && deps.geoip !== null ? deps.geoip.locate(ip) : null
        // Read above (without error) whenever the project anonymizes.
        const anonymize = s?.anonymizeIps === true && Object.hasOwn(stepPropertiesOf(e), '$ip')
        if (location === null && !anonymize) results[i] = ok(e)
        else if (!anonymize) results[i] = ok(located(e, location!))
        else results[i] = ok(anonymized(e, location))
      }
      return results
    },
  }
}

/**
 * The event with its location: the location's JSON spliced into the text when the properties have no
 * `$set`, `$set_once` or `$geoip_*` of their own (the step properties say so without a parse), else
 * the parsed properties with the location, serialised. The step properties get the location as the
 * properties do (they hold every key it adds or changes), the shape the location's keys.
 */
function located(e: StoredEvent, location: GeoLocation): StoredEvent {
  const step = stepPropertiesOf(e)
  const change = `geoip:${locationChange(location)}`
  // The next step parses the new text if it needs to (the parsed object is not built here: see withLocationText).
  const properties = withLocationText(e.properties, step, location, () => propertiesOf(e))
  return {
    ...e,
    properties,
    parsed: undefined,
    stepProperties: e.stepProperties === undefined ? undefined : withLocation(e.stepProperties, location),
    shape: e.shape === undefined ? undefined : mixShape(e.shape, change),
  }
}

/** The event with its location, if any, and without `$ip` (the project's `anonymize_ips`): parsed and serialised. */
function anonymized(e: StoredEvent, location: GeoLocation | null): StoredEvent {
  const value = location !== null ? withLocation(propertiesOf(e), location) : { ...propertiesOf(e) }
  delete value.$ip
  return withRewrittenProperties(e, value, `anonymize:${location === null ? '' : locationChange(location)}`)
}
