import type { User } from '../projects/project-types.ts'

export const MATCHING = ['contains', 'regex', 'exact'] as const
export type Matching = (typeof MATCHING)[number]

/** A property filter of a step, in PostHog's list form. */
export interface PropertyFilter {
  key: string
  value?: unknown
  operator?: string | null
  type?: string
  [extra: string]: unknown
}

/** One event-matching step of an action; an action matches an event when any step does. */
export interface ActionStep {
  id: string
  event: string | null
  tag_name: string | null
  text: string | null
  text_matching: Matching | null
  href: string | null
  href_matching: Matching | null
  selector: string | null
  url: string | null
  url_matching: Matching | null
  name: string | null
  properties: PropertyFilter[]
}

export interface Action {
  id: number
  projectId: number
  name: string | null
  description: string
  tags: string[]
  postToChat: boolean
  chatMessageFormat: string
  steps: ActionStep[]
  deleted: boolean
  isCalculating: boolean
  lastCalculatedAt: Date
  pinnedAt: Date | null
  createdBy: User | null
  createdAt: Date
}

/** The writable fields of an action; on update only the fields present change. Steps are replaced whole. */
export interface ActionInput {
  name?: string | null
  description?: string
  tags?: string[]
  postToChat?: boolean
  chatMessageFormat?: string
  steps?: ActionStep[]
  deleted?: boolean
  lastCalculatedAt?: Date
  /** `null` unpins; a date pins at the server's now unless already pinned (PostHog's rule). */
  pinnedAt?: Date | null
}
