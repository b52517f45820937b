import { useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, CopyButton, ErrorBox, Field, PageHeader } from '../ui.tsx'
import { PersonalKeys, Members } from './settings-team.tsx'
import { Ingestion } from './settings-ingestion.tsx'
import { Notifications } from './settings-notifications.tsx'
import { ReplaySettings } from './settings-replay.tsx'

const TABS = [['project', 'Project'], ['keys', 'Personal API keys'], ['members', 'Members'], ['ingestion', 'Ingestion'], ['notifications', 'Notifications'], ['replay', 'Replay']] as const
type Tab = (typeof TABS)[number][0]

/** The snippets to paste into each SDK, with this project's key and this server's address. */
function snippets(token: string, host: string) {
  return {
    'posthog-js': `import posthog from 'posthog-js'\n\nposthog.init('${token}', { api_host: '${host}' })`,
    'posthog-node': `import { PostHog } from 'posthog-node'\n\nconst client = new PostHog('${token}', { host: '${host}' })\nclient.capture({ distinctId: 'user-1', event: 'signed_up' })\nawait client.shutdown()`,
    'posthog-python': `from posthog import Posthog\n\nposthog = Posthog('${token}', host='${host}')\nposthog.capture('user-1', 'signed_up')`,
  }
}

export default function SettingsPage() {
  const [tab, setTab] = useState<Tab>('project')
  return (
    <>
      <PageHeader title="Settings" />
      <div className="tabs" role="tablist">
        {TABS.map(([id, label]) => (
          <button key={id} type="button" role="tab" aria-selected={tab === id} aria-controls={`tab-${id}`} onClick={() => setTab(id)}>{label}</button>
        ))}
      </div>
      <div id={`tab-${tab}`} role="tabpanel">
        {tab === 'project' && <ProjectSettings />}
        {tab === 'keys' && <PersonalKeys />}
        {tab === 'members' && <Members />}
        {tab === 'ingestion' && <Ingestion />}
        {tab === 'notifications' && <Notifications />}
        {tab === 'replay' && <ReplaySettings />}
      </div>
    </>
  )
}

function ProjectSettings() {
  const { project, base, canManage } = useSession()
  const queryClient = useQueryClient()
  const [timezone, setTimezone] = useState(project.timezone)
  const [sdk, setSdk] = useState<'posthog-js' | 'posthog-node' | 'posthog-python'>('posthog-js')
  const saveTimezone = useMutation({
    mutationFn: () => api(`${base}/`, { method: 'PATCH', body: { timezone } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const resetKey = useMutation({
    mutationFn: () => api(`${base}/reset_token/`, { method: 'PATCH' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const code = snippets(project.api_token, window.location.origin)[sdk]
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC']
  return (
    <>
      <Card title="Project API key" actions={<CopyButton text={project.api_token} label="Copy key" />}>
        <p className="muted">Write-only: safe to put in your web pages and apps. It can send events and read flags, nothing else.</p>
        <p className="mono" data-testid="project-api-key">{project.api_token}</p>
        {canManage && (
          <button type="button" className="btn small danger" disabled={resetKey.isPending} onClick={() => confirm('Reset the project API key? Apps using the old key stop sending events.') && resetKey.mutate()}>
            Reset key
          </button>
        )}
        {resetKey.error && <ErrorBox error={resetKey.error} />}
      </Card>
      <Card title="Send events" actions={<CopyButton text={code} label="Copy snippet" />}>
        <div className="tabs" role="tablist" aria-label="SDK">
          {(['posthog-js', 'posthog-node', 'posthog-python'] as const).map((s) => (
            <button key={s} type="button" role="tab" aria-selected={sdk === s} onClick={() => setSdk(s)}>{s}</button>
          ))}
        </div>
        <pre className="code" tabIndex={0} aria-label={`${sdk} snippet`}>{code}</pre>
      </Card>
      <Card title="Time zone">
        <form className="row" onSubmit={(e) => { e.preventDefault(); saveTimezone.mutate() }}>
          <Field label="Project time zone" hint="Days in insights start at midnight here.">
            <select value={timezone} onChange={(e) => setTimezone(e.target.value)} disabled={!canManage}>
              {[...new Set(['UTC', project.timezone, ...zones])].map((z) => <option key={z}>{z}</option>)}
            </select>
          </Field>
          <button className="btn primary" disabled={!canManage || saveTimezone.isPending}>Save</button>
          {saveTimezone.isSuccess && <span className="muted">Saved.</span>}
        </form>
        {!canManage && <p className="muted">Only admins and owners change project settings.</p>}
        {saveTimezone.error && <ErrorBox error={saveTimezone.error} />}
      </Card>
    </>
  )
}
