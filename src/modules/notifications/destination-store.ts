import type { Page } from '../../shared/page.ts'
import type { Destination, DestinationInput } from './destination-types.ts'

/** Persistence of webhook destinations; deleted ones are neither listed nor found. */
export interface DestinationStore {
  list(projectId: number, page: Page): Promise<{ count: number; rows: Destination[] }>
  find(projectId: number, id: number): Promise<Destination | null>
  insert(projectId: number, input: Required<Omit<DestinationInput, 'deleted'>>): Promise<Destination>
  /** Null when there is no such live destination. */
  update(projectId: number, id: number, input: DestinationInput): Promise<Destination | null>
}
