import { Fragment, useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Card, Empty, Field, JsonView, Loadable, PageHeader } from '../ui.tsx'
import type { CursorListJson, GroupJson, GroupTypeJson } from '../../../src/http/wire-types.ts'

export default function GroupsPage() {
  const { base } = useSession()
  const types = useQuery({ queryKey: ['group-types', base], queryFn: () => api<GroupTypeJson[]>(`${base}/groups_types/`) })
  const [index, setIndex] = useState(0)
  const [search, setSearch] = useState('')
  const [applied, setApplied] = useState('')
  const [open, setOpen] = useState<string | null>(null)
  const groups = useQuery({
    queryKey: ['groups', base, index, applied],
    queryFn: () => api<CursorListJson<GroupJson>>(`${base}/groups/?group_type_index=${index}&search=${encodeURIComponent(applied)}`),
    enabled: (types.data?.length ?? 0) > 0,
  })
  return (
    <>
      <PageHeader title="Groups" description="Companies, teams or any other group type your events name." />
      <Loadable query={types}>
        {(list) => list.length === 0 ? <Empty>No group types yet. Send events with <code>$groups</code> to create them.</Empty> : (
          <>
            <Card>
              <form className="row" onSubmit={(e) => { e.preventDefault(); setApplied(search) }}>
                <Field label="Group type">
                  <select value={index} onChange={(e) => setIndex(Number(e.target.value))}>
                    {list.map((t) => <option key={t.group_type_index} value={t.group_type_index}>{t.name_plural || t.group_type}</option>)}
                  </select>
                </Field>
                <Field label="Search"><input type="search" value={search} onChange={(e) => setSearch(e.target.value)} /></Field>
                <button className="btn primary">Search</button>
              </form>
            </Card>
            <Card>
              <Loadable query={groups}>
                {(page) => page.results.length === 0 ? <Empty>No groups found.</Empty> : (
                  <table aria-label="Groups">
                    <thead><tr><th>Key</th><th>Name</th><th>Created</th></tr></thead>
                    <tbody>
                      {page.results.map((g) => (
                        <Fragment key={g.group_key}>
                          <tr className="clickable" onClick={() => setOpen(open === g.group_key ? null : g.group_key)}>
                            <td className="mono"><button type="button" className="link">{g.group_key}</button></td>
                            <td>{String(g.group_properties.name ?? '')}</td>
                            <td><Ago iso={g.created_at} /></td>
                          </tr>
                          {open === g.group_key && <tr><td colSpan={3}><JsonView value={g.group_properties} /></td></tr>}
                        </Fragment>
                      ))}
                    </tbody>
                  </table>
                )}
              </Loadable>
            </Card>
          </>
        )}
      </Loadable>
    </>
  )
}
