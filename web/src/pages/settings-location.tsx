import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, ErrorBox } from '../ui.tsx'

const SWITCHES = [
  ['geoip_enabled', 'Add locations (GeoIP)', 'Each event gets the country, region and city of its IP address, and so does its person.'],
  ['anonymize_ips', 'Discard client IP data', 'Events are stored without $ip. Locations are still added from it first.'],
] as const

/** The project's GeoIP and IP address settings; DB-IP's licence asks for the link back shown here. */
export function LocationSettings() {
  const { project, base, canManage } = useSession()
  const queryClient = useQueryClient()
  const save = useMutation({
    mutationFn: (patch: Record<string, boolean>) => api(`${base}/`, { method: 'PATCH', body: patch }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const pending = save.isPending || save.isSuccess ? save.variables : undefined
  const stored = project as unknown as Record<string, unknown>
  return (
    <Card title="Locations and IP addresses">
      <ul className="switches">
        {SWITCHES.map(([key, label, hint]) => (
          <li key={key}>
            <label className="row">
              <input type="checkbox" role="switch" checked={(pending && key in pending ? pending[key] : stored[key]) === true} disabled={!canManage || save.isPending}
                onChange={(e) => save.mutate({ [key]: e.target.checked })} />
              <span><strong>{label}</strong> <span className="muted">{hint}</span></span>
            </label>
          </li>
        ))}
      </ul>
      <p className="muted"><a href="https://db-ip.com" target="_blank" rel="noreferrer">IP Geolocation by DB-IP</a></p>
      {save.error && <ErrorBox error={save.error} />}
    </Card>
  )
}
