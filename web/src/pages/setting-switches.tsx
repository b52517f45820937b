import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { ErrorBox } from '../ui.tsx'

/** A project setting shown as a switch: its key in the project JSON, its label and what it does. */
export type SettingSwitch = readonly [key: string, label: string, hint: string]

/**
 * One switch per boolean project setting, each saved at once with a PATCH of the project. Shown as asked
 * while the change is saved and the session reloads; as stored otherwise.
 */
export function SettingSwitches({ switches }: { switches: readonly SettingSwitch[] }) {
  const { project, base, canManage } = useSession()
  const queryClient = useQueryClient()
  const save = useMutation({
    mutationFn: (patch: Record<string, boolean>) => api(`${base}/`, { method: 'PATCH', body: patch }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const pending = save.isPending || save.isSuccess ? save.variables : undefined
  const stored = project as unknown as Record<string, unknown>
  return (
    <>
      <ul className="switches">
        {switches.map(([key, label, hint]) => (
          <li key={key}>
            <label className="row">
              <input type="checkbox" role="switch" checked={(pending && key in pending ? pending[key] : stored[key]) === true} disabled={!canManage || save.isPending}
                onChange={(e) => save.mutate({ [key]: e.target.checked })} />
              <span><strong>{label}</strong> <span className="muted">{hint}</span></span>
            </label>
          </li>
        ))}
      </ul>
      {save.error && <ErrorBox error={save.error} />}
    </>
  )
}
