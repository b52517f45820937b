import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react'
import { Link } from 'wouter'
import { useInfiniteQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Empty, ErrorBox } from '../ui.tsx'
import type { ActorJson, ActorsPage, ActorsPick } from './actors.ts'
import { num } from './format.ts'

// PostHog's persons modal asks for 100 at a time.
const PAGE = 100
const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])'

/** The value once it has stopped changing for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}

/**
 * The columns asked for: trends add each person's event count and list the busiest first, as
 * PostHog does; the other lists go by email (the server's `person` order), easier to scan than ids.
 */
function columnsFor(pick: ActorsPick): { select: string[]; orderBy: string[] } {
  const inner = pick.source.source as { kind?: string } | undefined
  if (pick.source.kind === 'InsightActorsQuery' && (inner?.kind === 'TrendsQuery' || inner?.kind === 'PathsQuery')) return { select: ['person', 'event_count'], orderBy: ['event_count DESC, actor_id DESC'] }
  return { select: ['person'], orderBy: ['person ASC'] }
}

const displayName = (a: ActorJson) => a.name || String(a.properties?.email ?? '') || a.distinct_ids?.[0] || a.id
/** A second line under the name: the person's `name` property, else its distinct id, when it says more. */
function detail(a: ActorJson): { text: string; isId: boolean } | null {
  const shown = displayName(a)
  const name = typeof a.properties?.name === 'string' ? a.properties.name : null
  if (name && name !== shown) return { text: name, isId: false }
  const id = a.distinct_ids?.[0]
  return id && id !== shown ? { text: id, isId: true } : null
}

/**
 * The persons behind a clicked number, as PostHog's persons modal lists them: a page of 100, "Load
 * more" while the server has more, a search by email, name or distinct id, each person linking to
 * their page. A modal `<dialog>`: the rest of the page is inert, Tab cycles inside, Escape, the
 * close button and a click on the backdrop close it, and focus goes back where it was.
 */
export function PersonsModal({ pick, onClose }: { pick: ActorsPick; onClose: () => void }) {
  const { base } = useSession()
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const [search, setSearch] = useState('')
  const applied = useSettled(search.trim(), 300)
  const { select, orderBy } = columnsFor(pick)
  const actors = useInfiniteQuery({
    queryKey: ['actors', base, pick.source, applied],
    initialPageParam: 0,
    queryFn: ({ pageParam }) => api<ActorsPage>(`${base}/query/`, {
      method: 'POST',
      body: { query: { kind: 'ActorsQuery', source: pick.source, select, orderBy, limit: PAGE, offset: pageParam, ...(applied ? { search: applied } : {}) } },
    }),
    getNextPageParam: (last) => (last.hasMore ? last.offset + last.results.length : undefined),
    retry: false,
    staleTime: 60_000,
  })

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
    const d = dialog.current!
    if (!d.open) d.showModal()
    return () => {
      if (opener?.isConnected) opener.focus()
    }
  }, [])

  // The native modal already makes the page behind it inert; this keeps Tab from leaving for the browser's own controls.
  const trapTab = (e: KeyboardEvent<HTMLDialogElement>) => {
    if (e.key !== 'Tab') return
    const items = [...dialog.current!.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null)
    if (items.length === 0) return
    const first = items[0]
    const last = items[items.length - 1]
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault()
      last.focus()
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault()
      first.focus()
    }
  }

  const pages = actors.data?.pages ?? []
  const columns = pages[0]?.columns ?? select
  const person = Math.max(0, columns.indexOf('person'))
  const events = columns.indexOf('event_count')
  const rows = pages.flatMap((p) => p.results)
  return (
    <dialog
      ref={dialog}
      className="modal"
      aria-labelledby={titleId}
      onCancel={(e) => { e.preventDefault(); onClose() }}
      onClose={onClose}
      onKeyDown={trapTab}
      onClick={(e) => { if (e.target === dialog.current) onClose() }}
    >
      <div className="modal-head">
        <div>
          <h2 id={titleId}>{pick.title}</h2>
          {pick.count !== undefined && <p className="muted">{num(pick.count)} {pick.count === 1 ? 'person' : 'persons'}</p>}
        </div>
        <button type="button" className="btn small" aria-label="Close" onClick={onClose}>✕</button>
      </div>
      <label className="field">
        <span className="field-label">Search persons</span>
        <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Email, name or distinct id" />
      </label>
      <div className="modal-list" tabIndex={0} role="region" aria-label="Persons list">
        {actors.error ? <ErrorBox error={actors.error} /> : actors.isPending ? <p className="muted" role="status">Loading…</p> : rows.length === 0 ? (
          <Empty>{applied ? 'No one here matches the search.' : 'No one here.'}</Empty>
        ) : (
          <table aria-label="Persons">
            <thead><tr><th>Person</th>{events >= 0 && <th className="num">Events</th>}</tr></thead>
            <tbody>
              {rows.map((row) => {
                const a = row[person] as ActorJson
                const more = detail(a)
                return (
                  <tr key={a.id}>
                    <td>
                      {a.distinct_ids ? <Link href={`~/persons/${encodeURIComponent(a.id)}`}>{displayName(a)}</Link> : <span className="muted">Deleted person</span>}
                      {a.distinct_ids && <> · <Link href={`~/replay?person_uuid=${encodeURIComponent(a.id)}`}>Watch recordings</Link></>}
                      {more && <div className={more.isId ? 'muted mono' : 'muted'}>{more.text}</div>}
                    </td>
                    {events >= 0 && <td className="num">{num(row[events] as number)}</td>}
                  </tr>
                )
              })}
            </tbody>
          </table>
        )}
      </div>
      <div className="modal-foot">
        <span className="muted" role="status">{rows.length > 0 ? `Showing ${num(rows.length)}${actors.hasNextPage ? ' so far' : ''}` : ''}</span>
        {actors.hasNextPage && (
          <button type="button" className="btn" disabled={actors.isFetchingNextPage} onClick={() => void actors.fetchNextPage()}>
            {actors.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
        )}
      </div>
    </dialog>
  )
}
