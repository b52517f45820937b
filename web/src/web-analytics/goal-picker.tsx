import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Field } from '../ui.tsx'
import { useEventNames } from '../insights/event-names.ts'
import { goalOf, goalValue, type WebGoal } from './web-filters.ts'
import type { ActionJson, ListJson } from '../../../src/http/wire-types.ts'

/**
 * PostHog's conversion goal picker on the web page: none, one of the project's actions, or a custom
 * event (the event names without `$`: PostHog's own events are not goals). With a goal, the overview
 * shows visitors, total and unique conversions and the conversion rate.
 */
export function GoalPicker({ goal, onChange }: { goal: WebGoal | null; onChange: (g: WebGoal | null) => void }) {
  const { base } = useSession()
  const actions = useQuery({ queryKey: ['actions', base], queryFn: () => api<ListJson<ActionJson>>(`${base}/actions/?limit=200`) })
  const events = useEventNames(base).filter((n) => !n.startsWith('$')).sort()
  const value = goalValue(goal)
  // A goal from the address bar shows even before (or without) the lists naming it.
  const known = value === '' || (actions.data?.results ?? []).some((a) => goalValue({ actionId: a.id }) === value) || events.some((n) => goalValue({ customEventName: n }) === value)
  return (
    <Field label="Conversion goal">
      <select value={value} onChange={(e) => onChange(goalOf(e.target.value))}>
        <option value="">None</option>
        {!known && <option value={value}>{value}</option>}
        {(actions.data?.results.length ?? 0) > 0 && (
          <optgroup label="Actions">
            {actions.data!.results.map((a) => <option key={a.id} value={goalValue({ actionId: a.id })}>{a.name}</option>)}
          </optgroup>
        )}
        {events.length > 0 && (
          <optgroup label="Custom events">
            {events.map((n) => <option key={n} value={goalValue({ customEventName: n })}>{n}</option>)}
          </optgroup>
        )}
      </select>
    </Field>
  )
}
