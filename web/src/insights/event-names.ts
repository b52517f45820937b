import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import type { EventListJson, ListJson } from '../../../src/http/wire-types.ts'

/** Event names for the pickers: the event definitions, else (none yet, or no answer) the names among the newest events. */
export function useEventNames(base: string): string[] {
  const q = useQuery({
    queryKey: ['event-names', base],
    queryFn: async () => {
      try {
        const names = (await api<ListJson<{ name: string }>>(`${base}/event_definitions/?limit=500`)).results.map((d) => d.name)
        if (names.length > 0) return names
      } catch {
        // Answered below from the newest events.
      }
      return [...new Set((await api<EventListJson>(`${base}/events/?limit=500`)).results.map((e) => e.event))]
    },
  })
  return q.data ?? []
}
