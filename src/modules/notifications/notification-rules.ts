import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'

/** An action the pipeline matches events against: it notifies, or a destination filters on it. */
export interface RuleAction {
  id: number
  name: string
  steps: ActionStepDefinition[]
  /** `post_to_chat`: each matching event sends a message to the project's incoming webhook. */
  notify: boolean
  /** `chat_message_format` (empty: PostHog's default). */
  messageFormat: string
}

/** `{events, actions, properties}`: an event passes when it is one of the events or matches one of the actions (either list empty: any), and matches every property filter. */
export interface DestinationFilters {
  events?: string[]
  actions?: number[]
  properties?: PropertyFilter[]
}

export interface DestinationRule {
  id: number
  url: string
  headers: Record<string, string>
  filters: DestinationFilters
  bodyTemplate: string | null
}

/** What the pipeline needs of one project to find the messages its events send. */
export interface ProjectRules {
  projectId: number
  projectName: string
  /** PostHog's `slack_incoming_webhook`; null: actions do not notify. */
  chatWebhook: string | null
  /** Only the actions that notify or that an enabled destination filters on. */
  actions: RuleAction[]
  /** Enabled destinations. */
  destinations: DestinationRule[]
}

/** One of an event's groups, as `$group_<index>` names it. */
export interface GroupRef {
  projectId: number
  index: number
  key: string
}

/** A group as a message template reads it: its type's name, its properties (`{}` before a `$groupidentify`). */
export interface GroupDetails extends GroupRef {
  type: string
  properties: Record<string, unknown>
}

/** Reads the rules of several projects at once (one statement per micro-batch). */
export interface NotificationRuleStore {
  rulesFor(projectIds: readonly number[]): Promise<ProjectRules[]>
  /** The groups of a batch's events whose messages name groups, in one statement; refs of unknown group types are left out. */
  groupsOf(refs: readonly GroupRef[]): Promise<GroupDetails[]>
}
