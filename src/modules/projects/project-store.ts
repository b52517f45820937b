import type { Organization, Project, User } from './project-types.ts'
import type { RecordingSettings } from '../../domain/replay/recording-settings.ts'

export interface ProjectSettingsInput {
  name?: string
  timezone?: string
  sessionRecording?: RecordingSettings
  /** null clears it. */
  slackIncomingWebhook?: string | null
}

export interface BootstrapInput {
  organizationName: string
  projectName: string
  projectApiToken: string
  user: { email: string; firstName: string }
  personalKey: { hash: string; mask: string; label: string }
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
  /** Changes the given settings (name, timezone, replay settings as a whole); the others stay. */
  updateSettings(projectId: number, input: ProjectSettingsInput): Promise<Project>
  addMember(projectId: number, userId: number, level: number): Promise<void>
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
