import { Link, Route, Switch, useParams } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Badge, Card, Empty, ErrorBox, Loadable, PageHeader } from '../ui.tsx'
import { FlagEditor } from './flag-editor.tsx'
import { FlagPreview } from './flag-preview.tsx'
import type { FlagJson, ListJson } from '../../../src/http/wire-types.ts'

export default function FlagsPage() {
  return (
    <Switch>
      <Route path="/new">{() => <FlagEditor flag={null} />}</Route>
      <Route path="/:id" component={FlagDetail} />
      <Route component={FlagList} />
    </Switch>
  )
}

/** What the flag does, in one line ("50% of users", "2 conditions", "3 variants"). */
export function flagSummary(f: FlagJson): string {
  const variants = f.filters.multivariate?.variants?.length ?? 0
  const groups = f.filters.groups ?? []
  const parts = [variants ? `${variants} variants` : 'boolean']
  if (f.is_simple_flag) parts.push(`${f.rollout_percentage ?? 100}% of users`)
  else parts.push(`${groups.length} condition${groups.length === 1 ? '' : 's'}`)
  return parts.join(' · ')
}

function FlagList() {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const flags = useQuery({ queryKey: ['flags', base], queryFn: () => api<ListJson<FlagJson>>(`${base}/feature_flags/?limit=200`) })
  const toggle = useMutation({
    mutationFn: (f: FlagJson) => api(`${base}/feature_flags/${f.id}/`, { method: 'PATCH', body: { active: !f.active } }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['flags', base] }),
  })
  return (
    <>
      <PageHeader title="Feature flags" description="Roll features out to some of your users, with conditions and variants.">
        <Link href="/new" className="btn primary">New flag</Link>
      </PageHeader>
      {toggle.error && <ErrorBox error={toggle.error} />}
      <Card>
        <Loadable query={flags}>
          {(page) => page.results.length === 0 ? <Empty>No feature flags yet.</Empty> : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="Feature flags">
                <thead><tr><th>Key</th><th className="hide-narrow">Name</th><th>Release</th><th>Enabled</th></tr></thead>
                <tbody>
                  {page.results.map((f) => (
                    <tr key={f.id}>
                      <td><Link href={`/${f.id}`} className="mono">{f.key}</Link></td>
                      <td className="hide-narrow">{f.name}</td>
                      <td>{flagSummary(f)}</td>
                      <td>
                        <label className="check">
                          <input type="checkbox" role="switch" checked={f.active} onChange={() => toggle.mutate(f)} aria-label={`Enable ${f.key}`} />
                          <Badge tone={f.active ? 'success' : 'neutral'}>{f.active ? 'On' : 'Off'}</Badge>
                        </label>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Loadable>
      </Card>
    </>
  )
}

function FlagDetail() {
  const { base } = useSession()
  const { id } = useParams<{ id: string }>()
  const flag = useQuery({ queryKey: ['flag', base, id], queryFn: () => api<FlagJson>(`${base}/feature_flags/${id}/`) })
  return (
    <Loadable query={flag}>
      {(f) => (
        <>
          <FlagEditor flag={f} />
          <FlagPreview flag={f} />
        </>
      )}
    </Loadable>
  )
}
