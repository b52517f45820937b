import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, ErrorBox, Field } from '../ui.tsx'
import { metricSum } from './settings-ingestion.tsx'

/** The project's event retention and when the worker last applied it (from /_metrics). */
export function Retention() {
  const { project, base, canManage } = useSession()
  const queryClient = useQueryClient()
  const current = (project as { event_retention_days?: number | null }).event_retention_days ?? null
  const [days, setDays] = useState(current === null ? '' : String(current))
  const save = useMutation({
    mutationFn: () => api(`${base}/`, { method: 'PATCH', body: { event_retention_days: days.trim() === '' ? null : Number(days) } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const run = useQuery({
    queryKey: ['retention-metrics'],
    queryFn: async () => {
      const text = await (await fetch('/_metrics')).text()
      return { at: metricSum(text, 'tally_retention_last_run_timestamp_seconds'), deleted: metricSum(text, 'tally_retention_last_deleted_events') }
    },
    refetchInterval: 10_000,
  })
  const lastRun = run.data?.at ? new Date(run.data.at * 1000).toLocaleString() : null
  return (
    <Card title="Event retention">
      <form className="row" onSubmit={(e) => { e.preventDefault(); save.mutate() }}>
        <Field label="Keep events for (days)" hint="Empty: keep forever. Older events are deleted within a minute, then hourly.">
          <input type="number" min={1} value={days} onChange={(e) => setDays(e.target.value)} disabled={!canManage} />
        </Field>
        <button className="btn primary" disabled={!canManage || save.isPending}>Save</button>
        {save.isSuccess && <span className="muted">Saved.</span>}
      </form>
      <p className="muted" data-testid="retention-last-run">
        {lastRun ? `Last run ${lastRun}: ${run.data?.deleted ?? 0} events deleted.` : 'Not run yet.'}
      </p>
      {save.error && <ErrorBox error={save.error} />}
    </Card>
  )
}
