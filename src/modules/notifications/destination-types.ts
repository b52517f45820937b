import type { DestinationFilters } from './notification-rules.ts'

/** A webhook destination: matching events are POSTed to `url`, their body made by `bodyTemplate`. */
export interface Destination {
  id: number
  projectId: number
  name: string
  url: string
  enabled: boolean
  headers: Record<string, string>
  filters: DestinationFilters
  /** JSON text with placeholders (render-body-template.ts); null: PostHog's default body. */
  bodyTemplate: string | null
  createdAt: Date
  updatedAt: Date
}

export type DestinationInput = Partial<Pick<Destination, 'name' | 'url' | 'enabled' | 'headers' | 'filters' | 'bodyTemplate'>> & { deleted?: boolean }
