import type { Page } from '../../shared/page.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import { newUuid } from '../../shared/ids.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { StepInput } from './action-schemas.ts'
import type { ActionStore } from './action-store.ts'
import type { ActionEventReads } from './action-event-reads.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'
import type { Action, ActionInput, ActionStep } from './action-types.ts'

function notFound(): AppError {
  return new AppError('not_found', 'Not found.')
}

/**
 * Steps replace the old ones whole; a step keeps the id the client sent back (so ids stay stable across
 * edits), and a new step, or one whose id repeats, gets a fresh one.
 */
function assignStepIds(steps: StepInput[]): ActionStep[] {
  const seen = new Set<string>()
  return steps.map((s) => {
    const id = s.id !== undefined && !seen.has(s.id) ? s.id : newUuid()
    seen.add(id)
    return { ...s, id }
  })
}

/** Actions: CRUD with soft delete; names are unique among a project's live actions. */
/** `/count` looks this far back, as PostHog's ActionViewSet.count does (`now - relativedelta(months=3)`). */
const COUNT_MONTHS = 3

export function createActionService(store: ActionStore, events: ActionEventReads, clock: Clock = systemClock) {
  async function assertNameFree(tx: ActionStore, projectId: number, name: string | null | undefined, exceptId?: number) {
    if (name === null || name === undefined) return
    const other = await tx.findLiveByName(projectId, name, exceptId)
    if (other !== null) throw validationError('name', `This project already has an action with this name, ID ${other}`, 'unique')
  }

  return {
    list: (project: Project, page: Page) => store.list(project.id, page),

    /** A deleted action can still be retrieved (PostHog hides deleted actions only from the list). */
    async get(project: Project, id: number): Promise<Action> {
      return (await store.find(project.id, id)) ?? Promise.reject(notFound())
    },

    /**
     * Events of the last three months that match the action, counted in the event store; records
     * the run as the action's `last_calculated_at`. An action without steps matches nothing.
     */
    async count(project: Project, id: number): Promise<number> {
      const action = await this.get(project, id)
      if (action.steps.length === 0) return 0
      const before = new Date(clock.now())
      const after = new Date(before)
      after.setUTCMonth(after.getUTCMonth() - COUNT_MONTHS)
      const count = await events.countActionMatches(project.id, action.steps, { after, before })
      await store.update(project.id, id, { lastCalculatedAt: before })
      return count
    },

    async create(project: Project, user: User, input: Omit<ActionInput, 'steps'>, steps?: StepInput[]): Promise<Action> {
      return store.inTransaction(async (tx) => {
        if (!input.deleted) await assertNameFree(tx, project.id, input.name)
        const id = await tx.insert({ ...input, steps: assignStepIds(steps ?? []), projectId: project.id, createdBy: user.id })
        return (await tx.find(project.id, id))!
      })
    },

    async update(project: Project, id: number, input: Omit<ActionInput, 'steps'>, steps?: StepInput[]): Promise<Action> {
      return store.inTransaction(async (tx) => {
        const current = await tx.find(project.id, id)
        if (!current) throw notFound()
        const willBeLive = !(input.deleted ?? current.deleted)
        if (willBeLive && (input.name !== undefined || current.deleted)) {
          await assertNameFree(tx, project.id, input.name !== undefined ? input.name : current.name, id)
        }
        await tx.update(project.id, id, { ...input, ...(steps ? { steps: assignStepIds(steps) } : {}) })
        return (await tx.find(project.id, id))!
      })
    },
  }
}

export type ActionService = ReturnType<typeof createActionService>
