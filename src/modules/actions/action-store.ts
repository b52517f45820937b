import type { Page } from '../../shared/page.ts'
import type { Action, ActionInput } from './action-types.ts'

/** Persistence for actions and their steps. Every method is project-scoped. */
export interface ActionStore {
  inTransaction<T>(fn: (tx: ActionStore) => Promise<T>): Promise<T>
  /** Live actions, most recently calculated first, then by name. */
  list(projectId: number, page: Page): Promise<{ count: number; rows: Action[] }>
  find(projectId: number, id: number): Promise<Action | null>
  /** The id of a live action of the project with this exact name, other than `exceptId`. */
  findLiveByName(projectId: number, name: string, exceptId?: number): Promise<number | null>
  insert(input: ActionInput & { projectId: number; createdBy: number }): Promise<number>
  update(projectId: number, id: number, input: ActionInput): Promise<void>
}
