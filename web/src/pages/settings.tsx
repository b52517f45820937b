import { useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, CopyButton, ErrorBox, Field, PageHeader } from '../ui.tsx'
import { PersonalKeys, Members } from './settings-team.tsx'
import { Ingestion } from './settings-ingestion.tsx'
import { Notifications } from './settings-notifications.tsx'
import { Retention } from './settings-retention.tsx'
import { LocationSettings } from './settings-location.tsx'
import { SettingSwitches } from './setting-switches.tsx'
import { ReplaySettings } from './settings-replay.tsx'
import { TestAccounts } from './settings-test-accounts.tsx'

const TABS = [['project', 'Project'], ['keys', 'Personal API keys'], ['members', 'Members'], ['ingestion', 'Ingestion'], ['notifications', 'Notifications'], ['replay', 'Replay']] as const
type Tab = (typeof TABS)[number][0]

/**
 * PostHog's HTML snippet: a stub `posthog` that queues calls while posthog-js loads asynchronously
 * from this server's `/static/array.js`, which then replays them. Works in any plain HTML page.
 */
function htmlSnippet(token: string, host: string): string {
  const methods = 'init capture register register_once register_for_session unregister identify alias set_config reset ' +
    'get_distinct_id getFeatureFlag getFeatureFlagPayload isFeatureEnabled reloadFeatureFlags onFeatureFlags group resetGroups ' +
    'setPersonProperties opt_in_capturing opt_out_capturing has_opted_in_capturing has_opted_out_capturing captureException getSurveys loadToolbar debug'
  return `<script>
  !function(d,w){var p=w.posthog||[];if(p.__SV)return;w.posthog=p;p._i=[];p.init=function(token,config,name){
    var s=d.createElement("script");s.type="text/javascript";s.crossOrigin="anonymous";s.async=!0;
    s.src=config.api_host+"/static/array.js";var f=d.getElementsByTagName("script")[0];f.parentNode.insertBefore(s,f);
    var t=p;if(name!==void 0){t=p[name]=[]}else{name="posthog"}
    "${methods}".split(" ").forEach(function(m){t[m]=function(){t.push([m].concat([].slice.call(arguments)))}});
    p._i.push([token,config,name])};p.__SV=1}(document,window);
  posthog.init('${token}', { api_host: '${host}', person_profiles: 'identified_only' })
</script>`
}

/** The snippets to paste into each SDK, with this project's key and this server's address. */
function snippets(token: string, host: string) {
  return {
    HTML: htmlSnippet(token, host),
    'posthog-js (npm)': `import posthog from 'posthog-js'\n\nposthog.init('${token}', { api_host: '${host}' })`,
    'posthog-node': `import { PostHog } from 'posthog-node'\n\nconst client = new PostHog('${token}', { host: '${host}' })\nclient.capture({ distinctId: 'user-1', event: 'signed_up' })\nawait client.shutdown()`,
    'posthog-python': `from posthog import Posthog\n\nposthog = Posthog('${token}', host='${host}')\nposthog.capture('user-1', 'signed_up')`,
  }
}

type SdkName = keyof ReturnType<typeof snippets>
const SDK_NAMES = ['HTML', 'posthog-js (npm)', 'posthog-node', 'posthog-python'] as const satisfies readonly SdkName[]

/** PostHog's project settings that posthog-js reads through remote config, with what each does. */
const SWITCHES = [
  ['autocapture_exceptions_opt_in', 'Capture exceptions', 'Uncaught errors become $exception events.'],
  ['heatmaps_opt_in', 'Heatmaps', 'Clicks and scrolls are sent as heatmap data.'],
  ['capture_dead_clicks', 'Dead clicks', 'Clicks that change nothing become $dead_click events.'],
  ['autocapture_web_vitals_opt_in', 'Web vitals', 'Core web vitals become $web_vitals events.'],
  ['capture_performance_opt_in', 'Network timing', 'Network timings are kept with session recordings.'],
  ['autocapture_opt_out', 'Turn off autocapture', 'Clicks and form events are no longer captured automatically.'],
] as const

/** A switch per SDK setting: saved at once, picked up by posthog-js on its next page load. */
function ProductSwitches() {
  return (
    <Card title="posthog-js features">
      <p className="muted">Sent to posthog-js in its remote config; browsers pick a change up on their next page load.</p>
      <SettingSwitches switches={SWITCHES} />
    </Card>
  )
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
        {tab === 'ingestion' && <Retention />}
        {tab === 'ingestion' && <LocationSettings />}
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
  const [sdk, setSdk] = useState<SdkName>('HTML')
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
          {SDK_NAMES.map((s) => (
            <button key={s} type="button" role="tab" aria-selected={sdk === s} onClick={() => setSdk(s)}>{s}</button>
          ))}
        </div>
        {sdk === 'HTML' && <p className="muted">Paste it into the &lt;head&gt; of every page: posthog-js loads from this server.</p>}
        <pre className="code" tabIndex={0} aria-label={`${sdk} snippet`}>{code}</pre>
      </Card>
      <ProductSwitches />
      <TestAccounts />
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
