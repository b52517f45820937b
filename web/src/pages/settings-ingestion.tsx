import { useRef } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Badge, Card, Empty, ErrorBox, Loadable } from '../ui.tsx'
import type { DeadLetterJson, ListJson, ReplayJson } from '../../../src/http/wire-types.ts'

interface Ready { status: string; ingestion: { blocked?: boolean; reason?: string | null } | null; stores: Record<string, { ok: boolean; error?: string }> }

/** Sum of a metric's samples (all label sets) in Prometheus' text format. */
export function metricSum(text: string, name: string): number | null {
  let sum: number | null = null
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

/** The error's first sentence, without the stack the pipeline keeps for debugging. */
const firstLine = (text: string) => text.split(/\n| at /)[0].slice(0, 160)

async function readiness(): Promise<Ready> {
  const res = await fetch('/_ready')
  return (await res.json()) as Ready
}

/** Events/s (from two readings of the acknowledged-events counter), lag, backlog, readiness, dead letters. */
export function Ingestion() {
  const { base, canManage } = useSession()
  const queryClient = useQueryClient()
  const last = useRef<{ at: number; acked: number } | null>(null)
  const metrics = useQuery({
    queryKey: ['metrics'],
    queryFn: async () => {
      const text = await (await fetch('/_metrics')).text()
      const acked = metricSum(text, 'tally_queue_acked_total') ?? 0
      const now = performance.now()
      const prev = last.current
      last.current = { at: now, acked }
      return {
        perSecond: prev && now > prev.at ? ((acked - prev.acked) * 1000) / (now - prev.at) : null,
        lag: metricSum(text, 'tally_ingestion_lag_seconds'),
        backlog: metricSum(text, 'tally_queue_backlog_events'),
        acked,
      }
    },
    refetchInterval: 5000,
  })
  const ready = useQuery({ queryKey: ['ready'], queryFn: readiness, refetchInterval: 5000 })
  const letters = useQuery({ queryKey: ['dead-letters', base], queryFn: () => api<ListJson<DeadLetterJson>>(`${base}/dead_letters/?limit=50`) })
  const replay = useMutation({
    mutationFn: () => api<ReplayJson>(`${base}/dead_letters/replay/`, { method: 'POST', body: {} }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['dead-letters', base] }),
  })
  const pending = letters.data?.results.filter((l) => !l.replayed_at).length ?? 0
  return (
    <>
      <Card title="Ingestion" actions={ready.data && <Badge tone={ready.data.status === 'ready' ? 'success' : 'danger'}>{ready.data.status}</Badge>}>
        <Loadable query={metrics}>
          {(m) => (
            <div className="grid-2">
              <div><div className="muted">Events per second</div><div className="stat">{m.perSecond == null ? '…' : m.perSecond.toFixed(1)}</div></div>
              <div><div className="muted">Lag</div><div className="stat">{m.lag == null ? '—' : `${m.lag.toFixed(1)} s`}</div></div>
              <div><div className="muted">Queue backlog (events)</div><div className="stat">{m.backlog ?? '—'}</div></div>
              <div><div className="muted">Events processed since start</div><div className="stat">{m.acked.toLocaleString()}</div></div>
            </div>
          )}
        </Loadable>
        {ready.data?.ingestion?.reason && <ErrorBox error={ready.data.ingestion.reason} />}
      </Card>
      <Card title="Dead letters" actions={canManage && <button type="button" className="btn primary small" disabled={pending === 0 || replay.isPending} onClick={() => replay.mutate()}>Replay {pending} pending</button>}>
        <p className="muted">Events the pipeline could not store. Replaying puts them back on the queue.</p>
        {replay.error && <ErrorBox error={replay.error} />}
        {replay.data && <p role="status">Replayed {String((replay.data as { replayed?: number }).replayed ?? 0)}.</p>}
        <Loadable query={letters}>
          {(page) => page.results.length === 0 ? <Empty>No dead letters.</Empty> : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="Dead letters">
                <thead><tr><th>Failed</th><th className="hide-narrow">Event id</th><th className="hide-narrow">Step</th><th>Error</th><th>State</th></tr></thead>
                <tbody>
                  {page.results.map((l) => (
                    <tr key={l.id}>
                      <td><Ago iso={l.failed_at} /></td>
                      <td className="mono hide-narrow">{l.uuid}</td>
                      <td className="hide-narrow">{l.step}</td>
                      <td className="mono">
                        <details>
                          <summary>{firstLine(l.error ?? l.reason)}</summary>
                          {l.reason}: {l.error}
                        </details>
                      </td>
                      <td>{l.replayed_at ? <Badge tone="success">replayed</Badge> : <Badge tone="warning">pending</Badge>}</td>
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
