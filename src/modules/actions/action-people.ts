import { resolveDateRange } from '../../domain/query/date-range.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'
import { AppError } from '../../shared/errors.ts'
import type { Page } from '../../shared/page.ts'
import type { PersonStore } from '../persons/person-store.ts'
import type { Person } from '../persons/person-types.ts'
import type { Project } from '../projects/project-types.ts'
import type { ActionEventReads } from './action-event-reads.ts'
import type { ActionService } from './action-service.ts'

/** PostHog's date-range parameters of the legacy people endpoints (`Filter`): default the last 7 days. */
export interface PeopleRange {
  dateFrom?: string
  dateTo?: string
}

export interface ActionPeoplePage {
  persons: Person[]
  /** Persons whose events matched but who are gone from the metadata store (deleted since). */
  missing: number
  hasMore: boolean
}

/** The range in the project's zone; an error names the query parameter (`date_from`, `date_to`). */
function resolveRange(input: { date_from?: string; date_to?: string }, ctx: { now: Date; timeZone: string }) {
  try {
    return resolveDateRange(input, 'day', ctx, 'date')
  } catch (err) {
    if (err instanceof AppError && err.attr?.startsWith('date.')) throw new AppError(err.code, err.message, err.attr.slice(5), err.extra)
    throw err
  }
}

/**
 * `/actions/people`: the distinct persons (merges resolved) whose events in the range match the
 * action, found and paged inside the event store, then loaded from the metadata store in one query.
 */
export function createActionPeople(deps: {
  actions: Pick<ActionService, 'get'>
  events: ActionEventReads
  persons: Pick<PersonStore, 'findByUuids'>
  clock?: Clock
}) {
  const clock = deps.clock ?? systemClock
  return {
    async people(project: Project, actionId: number, range: PeopleRange, page: Page): Promise<ActionPeoplePage> {
      const action = await deps.actions.get(project, actionId)
      const now = new Date(clock.now())
      const ctx = { now, timeZone: project.timezone || 'UTC' }
      // `all` has no lower bound: the range is resolved from the end's own day only for its end.
      const all = range.dateFrom === 'all'
      const resolved = resolveRange({ date_from: all ? (range.dateTo ?? '-0d') : range.dateFrom, date_to: range.dateTo }, ctx)
      const after = all ? undefined : resolved.from
      if (action.steps.length === 0) return { persons: [], missing: 0, hasMore: false }
      const { personIds, hasMore } = await deps.events.actionPersons(project.id, action.steps, { after, before: resolved.to, ...page })
      const found = new Map((await deps.persons.findByUuids(project.id, personIds)).map((p) => [p.uuid, p]))
      const persons = personIds.flatMap((id) => found.get(id) ?? [])
      return { persons, missing: personIds.length - persons.length, hasMore }
    },
  }
}

export type ActionPeople = ReturnType<typeof createActionPeople>
