import { useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, ErrorBox, Field } from '../ui.tsx'
import type { ProjectJson } from '../../../src/http/wire-types.ts'

/** Session replay settings of the project (PostHog's names): recording on/off and what it takes. */
export function ReplaySettings() {
  const { project, canManage } = useSession()
  const queryClient = useQueryClient()
  const [form, setForm] = useState({
    session_recording_opt_in: project.session_recording_opt_in,
    capture_console_log_opt_in: project.capture_console_log_opt_in,
    session_recording_sample_rate: project.session_recording_sample_rate ?? '1.00',
    session_recording_minimum_duration_milliseconds: String(project.session_recording_minimum_duration_milliseconds ?? ''),
    linked_flag: project.session_recording_linked_flag?.key ?? '',
    maskAllInputs: project.session_recording_masking_config?.maskAllInputs ?? true,
    maskTextSelector: project.session_recording_masking_config?.maskTextSelector ?? '',
    recordHeaders: project.session_recording_network_payload_capture_config?.recordHeaders ?? false,
    recordBody: project.session_recording_network_payload_capture_config?.recordBody ?? false,
    session_recording_retention_period: project.session_recording_retention_period,
  })
  const save = useMutation({
    mutationFn: () =>
      api<ProjectJson>(`/api/projects/${project.id}/`, {
        method: 'PATCH',
        body: {
          session_recording_opt_in: form.session_recording_opt_in,
          capture_console_log_opt_in: form.capture_console_log_opt_in,
          session_recording_sample_rate: form.session_recording_sample_rate,
          session_recording_minimum_duration_milliseconds: form.session_recording_minimum_duration_milliseconds === '' ? null : Number(form.session_recording_minimum_duration_milliseconds),
          session_recording_linked_flag: form.linked_flag.trim() ? { key: form.linked_flag.trim() } : null,
          session_recording_masking_config: { maskAllInputs: form.maskAllInputs, maskTextSelector: form.maskTextSelector || null },
          session_recording_network_payload_capture_config: form.recordHeaders || form.recordBody ? { recordHeaders: form.recordHeaders, recordBody: form.recordBody } : null,
          session_recording_retention_period: form.session_recording_retention_period,
        },
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const set = (patch: Partial<typeof form>) => setForm({ ...form, ...patch })
  return (
    <Card title="Session replay">
      <form onSubmit={(e) => { e.preventDefault(); save.mutate() }} aria-label="Session replay settings">
        <label><input type="checkbox" checked={form.session_recording_opt_in} onChange={(e) => set({ session_recording_opt_in: e.target.checked })} /> Record user sessions</label>
        <label><input type="checkbox" checked={form.capture_console_log_opt_in} onChange={(e) => set({ capture_console_log_opt_in: e.target.checked })} /> Capture console logs</label>
        <Field label="Sample rate (0 to 1)"><input value={form.session_recording_sample_rate} onChange={(e) => set({ session_recording_sample_rate: e.target.value })} /></Field>
        <Field label="Minimum duration (ms)"><input type="number" min={0} max={30000} value={form.session_recording_minimum_duration_milliseconds} onChange={(e) => set({ session_recording_minimum_duration_milliseconds: e.target.value })} /></Field>
        <Field label="Only record when this feature flag is on (key)"><input value={form.linked_flag} onChange={(e) => set({ linked_flag: e.target.value })} /></Field>
        <label><input type="checkbox" checked={form.maskAllInputs} onChange={(e) => set({ maskAllInputs: e.target.checked })} /> Mask all inputs</label>
        <Field label="Mask the text of (CSS selector)"><input value={form.maskTextSelector} onChange={(e) => set({ maskTextSelector: e.target.value })} /></Field>
        <label><input type="checkbox" checked={form.recordHeaders} onChange={(e) => set({ recordHeaders: e.target.checked })} /> Record network request headers</label>
        <label><input type="checkbox" checked={form.recordBody} onChange={(e) => set({ recordBody: e.target.checked })} /> Record network request bodies</label>
        <Field label="Keep recordings for">
          <select value={form.session_recording_retention_period} onChange={(e) => set({ session_recording_retention_period: e.target.value as typeof form.session_recording_retention_period })}>
            <option value="30d">30 days</option><option value="90d">90 days</option><option value="1y">1 year</option><option value="5y">5 years</option>
          </select>
        </Field>
        <button className="btn primary" disabled={!canManage || save.isPending}>Save</button>
      </form>
      {save.error && <ErrorBox error={save.error} />}
      {save.isSuccess && <p role="status">Saved.</p>}
    </Card>
  )
}
