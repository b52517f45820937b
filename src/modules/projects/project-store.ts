import type { Organization, Project, User } from './project-types.ts'
import type { SdkSettingKey } from './project-settings.ts'
import type { RecordingSettings } from '../../domain/replay/recording-settings.ts'

export interface BootstrapInput {
  organizationName: string
  projectName: string
  projectApiToken: string
  user: { email: string; firstName: string }
  personalKey: { hash: string; mask: string; label: string }
}

/** What a PATCH of a project changes; absent keys stay as they are. */
export interface ProjectSettingsInput {
  name?: string
  timezone?: string
  /** The replay settings as a whole (see domain/replay/recording-settings.ts). */
  sessionRecording?: RecordingSettings
  /** PostHog's SDK settings named (project-settings.ts). */
  sdk?: Partial<Record<SdkSettingKey, boolean | null>>
  /** PostHog's `slack_incoming_webhook`; null clears it. */
  slackIncomingWebhook?: string | null
  /** null keeps events forever. */
  eventRetentionDays?: number | null
  /** Replace the lists as a whole (checked by the routes): test_account_filters, path_cleaning_filters. */
  testAccountFilters?: unknown[]
  pathCleaningFilters?: unknown[]
  anonymizeIps?: boolean
  geoipEnabled?: boolean
}

/** Persistence for organizations, users, projects, memberships and personal API keys. */
export interface ProjectStore {
  /** True when no organization exists yet: the first start of a data dir. */
  isEmpty(): Promise<boolean>
  /** Creates the organization, its owner, the default project and the owner's personal key, atomically. */
  bootstrap(input: BootstrapInput): Promise<{ organization: Organization; user: User; project: Project }>
  /** Adds a project to the organization; every member of the organization becomes a member of it. */
  createProject(input: { organizationId: number; name: string; apiToken: string }): Promise<Project>
  /** A user of the organization, with its membership at `level` (default 1, member). */
  createUser(input: { organizationId: number; email: string; firstName: string; level?: number }): Promise<User>
  /** Replaces the project's API token (the old one stops resolving at once). */
  updateApiToken(projectId: number, apiToken: string): Promise<Project>
  /** Changes the given settings (name, timezone, replay settings as a whole, PostHog's SDK settings); the others stay. */
  updateSettings(projectId: number, input: ProjectSettingsInput): Promise<Project>
  /** The project by id, or null (whoever asks). */
  findProjectById(id: number): Promise<Project | null>
  /** Which of these projects have had an event ingested (PostHog's `ingested_event`). */
  projectsWithEvents(projectIds: readonly number[]): Promise<Set<number>>
  addMember(projectId: number, userId: number, level: number): Promise<void>
  /** The user's level in the project (1 member, 8 admin, 15 owner); null when not a member. */
  memberLevel(projectId: number, userId: number): Promise<number | null>
  addPersonalKey(userId: number, key: { hash: string; mask: string; label: string }): Promise<void>
  findUserByPersonalKeyHash(hash: string): Promise<User | null>
  /** The owner of the first organization (the CLI acts as this user). */
  firstUser(): Promise<User | null>
  listProjects(): Promise<Project[]>
  listProjectsOfUser(userId: number): Promise<Project[]>
  findProjectOfUser(userId: number, projectId: number): Promise<Project | null>
  findProjectByToken(token: string): Promise<Project | null>
  findUserById(id: number): Promise<User | null>
}
