/** A group (PostHog's posthog_group): properties set by `$groupidentify`, keyed by type index and key. */
export interface Group {
  typeIndex: number
  key: string
  properties: Record<string, unknown>
  createdAt: Date
  /** `created_at` in microseconds since the epoch, as text: the exact position for a list cursor. */
  createdAtMicros: string
}

/** Where a groups list resumes: after this (created_at, key) in newest-first order. */
export interface GroupCursor {
  createdAtMicros: string
  key: string
}

/** Filters and position of a groups list (PostHog's GroupsViewSet.list). */
export interface GroupListQuery {
  typeIndex: number
  /** The key or the `name` property contains it (any case). */
  search?: string
  /** The key contains it (any case). */
  keyContains?: string
  after?: GroupCursor
  limit: number
}
