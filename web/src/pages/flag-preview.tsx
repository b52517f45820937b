import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Badge, Card, Empty, Loadable } from '../ui.tsx'
import type { EventListJson, FlagJson } from '../../../src/http/wire-types.ts'

/** The distinct ids of the 10 people most recently seen (from the newest events). */
async function recentDistinctIds(base: string): Promise<string[]> {
  const page = await api<EventListJson>(`${base}/events/?limit=500`)
  const ids: string[] = []
  for (const ev of page.results) if (!ids.includes(ev.distinct_id) && ids.length < 10) ids.push(ev.distinct_id)
  return ids
}

/** What `/decide` answers this flag for each of them: the very evaluation the SDKs get. */
async function evaluate(token: string, key: string, ids: string[]) {
  return Promise.all(ids.map(async (distinctId) => {
    const res = await fetch('/decide/?v=3', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, distinct_id: distinctId }) })
    if (!res.ok) throw new Error(`/decide answered ${res.status}`)
    const body = (await res.json()) as { featureFlags?: Record<string, boolean | string> }
    return { distinctId, value: body.featureFlags?.[key] ?? false }
  }))
}

export function FlagPreview({ flag }: { flag: FlagJson }) {
  const { base, project } = useSession()
  const result = useQuery({
    queryKey: ['flag-preview', base, flag.id, flag.version, flag.active],
    queryFn: async () => evaluate(project.api_token, flag.key, await recentDistinctIds(base)),
  })
  return (
    <Card title="Who gets it: the 10 people seen most recently" actions={<button type="button" className="btn small" onClick={() => void result.refetch()}>Re-evaluate</button>}>
      <Loadable query={result}>
        {(rows) => rows.length === 0 ? <Empty>No events yet, so nobody to preview.</Empty> : (
          <table aria-label="Flag preview">
            <thead><tr><th>Distinct id</th><th>Value</th></tr></thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.distinctId}>
                  <td className="mono">{r.distinctId}</td>
                  <td>{r.value === false ? <Badge>false</Badge> : <Badge tone="success">{String(r.value)}</Badge>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loadable>
    </Card>
  )
}
