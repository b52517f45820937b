import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Badge, Card, Empty, ErrorBox, Field, Loadable } from '../ui.tsx'

interface DestinationJson {
  id: number
  name: string
  url: string
  enabled: boolean
  headers: Record<string, string>
  filters: { events: string[]; actions: number[]; properties: unknown[] }
  body_template: string | null
}
interface DeliveryJson { id: number; idempotency_key: string; status: string; attempts: number; response_status: number | null; error: string | null; created_at: string; sent_at: string | null }

const TONE: Record<string, 'success' | 'warning' | 'danger' | 'neutral'> = { sent: 'success', pending: 'warning', failed: 'danger', dropped: 'danger' }

/** Where actions with "post to chat" send their messages, and the webhook destinations. */
export function Notifications() {
  return (
    <>
      <ChatWebhook />
      <Destinations />
    </>
  )
}

function ChatWebhook() {
  const { project, base, canManage } = useSession()
  const queryClient = useQueryClient()
  const current = (project as { slack_incoming_webhook?: string | null }).slack_incoming_webhook ?? ''
  const [url, setUrl] = useState(current)
  const save = useMutation({
    mutationFn: () => api(`${base}/`, { method: 'PATCH', body: { slack_incoming_webhook: url.trim() || null } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const test = useMutation({ mutationFn: () => api<{ success?: boolean }>('/api/user/test_slack_webhook/', { method: 'POST', body: { webhook: url.trim() } }) })
  return (
    <Card title="Actions that notify">
      <p className="muted">Actions with "post to chat" send a message here for every matching event: a Slack, Discord or Teams incoming webhook, or any endpoint that takes JSON.</p>
      <form className="row" onSubmit={(e) => { e.preventDefault(); save.mutate() }}>
        <Field label="Incoming webhook URL">
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://hooks.slack.com/services/..." disabled={!canManage} />
        </Field>
        <button className="btn primary" disabled={!canManage || save.isPending}>Save</button>
        <button type="button" className="btn" disabled={!url.trim() || test.isPending} onClick={() => test.mutate()}>Send test message</button>
      </form>
      {save.isSuccess && <p className="muted">Saved.</p>}
      {test.isSuccess && <p role="status">Test message sent.</p>}
      {save.error && <ErrorBox error={save.error} />}
      {test.error && <ErrorBox error={test.error} />}
    </Card>
  )
}

function Destinations() {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const list = useQuery({ queryKey: ['destinations', base], queryFn: () => api<{ results: DestinationJson[] }>(`${base}/destinations/?limit=100`) })
  const [name, setName] = useState('')
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState('')
  const create = useMutation({
    mutationFn: () =>
      api(`${base}/destinations/`, {
        method: 'POST',
        body: { name, url, filters: { events: events.split(',').map((e) => e.trim()).filter(Boolean) } },
      }),
    onSuccess: () => {
      setName('')
      setUrl('')
      setEvents('')
      void queryClient.invalidateQueries({ queryKey: ['destinations', base] })
    },
  })
  return (
    <Card title="Webhook destinations">
      <p className="muted">Every stored event that passes a destination's filters is POSTed to it as JSON, with an Idempotency-Key header that stays the same across retries.</p>
      <Loadable query={list}>
        {(data) => (data.results.length === 0 ? <Empty>No destinations yet.</Empty> : (
          <ul className="list">{data.results.map((d) => <DestinationRow key={d.id} destination={d} />)}</ul>
        ))}
      </Loadable>
      <form className="row" onSubmit={(e) => { e.preventDefault(); create.mutate() }}>
        <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} required /></Field>
        <Field label="URL"><input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required /></Field>
        <Field label="Events" hint="Comma-separated; empty: every event"><input value={events} onChange={(e) => setEvents(e.target.value)} /></Field>
        <button className="btn primary" disabled={create.isPending}>Add destination</button>
      </form>
      {create.error && <ErrorBox error={create.error} />}
    </Card>
  )
}

function DestinationRow({ destination: d }: { destination: DestinationJson }) {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const [open, setOpen] = useState(false)
  const path = `${base}/destinations/${d.id}/`
  const deliveries = useQuery({ queryKey: ['deliveries', path], queryFn: () => api<{ results: DeliveryJson[] }>(`${path}deliveries/`), enabled: open, refetchInterval: open ? 5000 : false })
  const test = useMutation({ mutationFn: () => api<{ success: boolean; status: number | null; error: string | null }>(`${path}test/`, { method: 'POST' }) })
  const toggle = useMutation({
    mutationFn: () => api(path, { method: 'PATCH', body: { enabled: !d.enabled } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['destinations', base] }),
  })
  const remove = useMutation({
    mutationFn: () => api(path, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['destinations', base] }),
  })
  return (
    <li>
      <div className="row">
        <strong>{d.name}</strong>
        <span className="mono muted">{d.url}</span>
        <Badge tone={d.enabled ? 'success' : 'neutral'}>{d.enabled ? 'enabled' : 'disabled'}</Badge>
        <span className="muted">{d.filters.events.length ? d.filters.events.join(', ') : 'every event'}</span>
        <span className="spacer" />
        <button type="button" className="btn small" onClick={() => test.mutate()} disabled={test.isPending}>Test send</button>
        <button type="button" className="btn small" onClick={() => toggle.mutate()}>{d.enabled ? 'Disable' : 'Enable'}</button>
        <button type="button" className="btn small" aria-expanded={open} onClick={() => setOpen(!open)}>Deliveries</button>
        <button type="button" className="btn small danger" onClick={() => confirm(`Delete ${d.name}?`) && remove.mutate()}>Delete</button>
      </div>
      {test.data && <p role="status">{test.data.success ? `Test sent: ${test.data.status}` : `Test failed: ${test.data.error}`}</p>}
      {test.error && <ErrorBox error={test.error} />}
      {open && (
        <Loadable query={deliveries}>
          {(data) => (data.results.length === 0 ? <Empty>No deliveries yet.</Empty> : (
            <table>
              <thead><tr><th>Status</th><th>Tries</th><th>Answer</th><th>Created</th><th>Sent</th></tr></thead>
              <tbody>
                {data.results.map((m) => (
                  <tr key={m.idempotency_key}>
                    <td><Badge tone={TONE[m.status] ?? 'neutral'}>{m.status}</Badge></td>
                    <td>{m.attempts}</td>
                    <td>{m.response_status ?? m.error ?? ''}</td>
                    <td><Ago iso={m.created_at} /></td>
                    <td>{m.sent_at ? <Ago iso={m.sent_at} /> : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </Loadable>
      )}
    </li>
  )
}
