import { Card } from '../ui.tsx'
import { SettingSwitches } from './setting-switches.tsx'

const SWITCHES = [
  ['geoip_enabled', 'Add locations (GeoIP)', 'Each event gets the country, region and city of its IP address, and so does its person.'],
  ['anonymize_ips', 'Discard client IP data', 'Events are stored without $ip. Locations are still added from it first.'],
] as const

/** The project's GeoIP and IP address settings; DB-IP's licence asks for the link back shown here. */
export function LocationSettings() {
  return (
    <Card title="Locations and IP addresses">
      <SettingSwitches switches={SWITCHES} />
      <p className="muted"><a href="https://db-ip.com" target="_blank" rel="noreferrer">IP Geolocation by DB-IP</a></p>
    </Card>
  )
}
