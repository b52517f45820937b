import { AppError } from '../../shared/errors.ts'
import { assertTimeZone } from '../../domain/query/zoned-time.ts'
import { generateToken, hashSecret, maskSecret } from '../../shared/ids.ts'
import type { ProjectSettingsInput, ProjectStore } from './project-store.ts'
import type { Project, User } from './project-types.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'

export interface BootstrapResult {
  created: boolean
  project?: Project
  user?: User
  projectApiKey?: string
  /** Only known (and printed) at creation: the store keeps a hash. */
  personalApiKey?: string
}

const NEGATIVE_TTL_MS = 30_000
const NEGATIVE_MAX = 10_000

/**
 * Projects, users and keys. Keeps every project API token in memory so that capture and decide
 * resolve their key without a database query; a token not in memory is looked up once and a miss
 * is remembered for 30 s (so a flood of bad keys cannot turn into a flood of queries).
 */
export function createProjectService(
  store: ProjectStore,
  clock: Clock = systemClock,
  opts: {
    /**
     * How long a project's settings are used before they are read again for remote config:
     * Infinity embedded (this process makes every change), finite at scale (another node may).
     */
    settingsTtlMs?: number
  } = {},
) {
  const settingsTtlMs = opts.settingsTtlMs ?? Infinity
  const settingsReadAt = new Map<number, { project: Project; at: number; reading?: Promise<Project> }>()
  const byToken = new Map<string, Project>()
  const missingTokens = new Map<string, number>()
  const userByKeyHash = new Map<string, User>()

  function remember(p: Project) {
    byToken.set(p.apiToken, p)
    missingTokens.delete(p.apiToken)
    settingsReadAt.set(p.id, { project: p, at: clock.now() })
  }

  /** Adds a personal API key for a user (the first user by default) and returns it once. */
  async function createPersonalKey(userId?: number, label = 'cli'): Promise<{ key: string; user: User }> {
    const user = userId ? await store.findUserById(userId) : await store.firstUser()
    if (!user) throw new AppError('not_found', 'No such user.')
    const key = generateToken('phx_')
    await store.addPersonalKey(user.id, { hash: hashSecret(key), mask: maskSecret(key), label })
    return { key, user }
  }

  /**
   * The project as remote config must see its settings (SDK and replay). Embedded it is the cached
   * project (every change goes through this process); at scale it is read again once older than the
   * TTL, and a store that does not answer keeps the last known one (remote config must not fail for it).
   */
  async function currentSettingsOf(project: Project): Promise<Project> {
    const known = settingsReadAt.get(project.id) ?? { project, at: clock.now() }
    if (clock.now() - known.at < settingsTtlMs) return known.project
    if (!known.reading) {
      known.reading = store.findProjectById(project.id).then(
        (fresh) => {
          if (fresh) remember(fresh)
          return fresh ?? known.project
        },
        () => known.project,
      ).finally(() => {
        known.reading = undefined
      })
      settingsReadAt.set(project.id, known)
    }
    return known.reading
  }

  return {
    /** Loads every project token into memory. */
    async warmUp(): Promise<void> {
      for (const p of await store.listProjects()) remember(p)
    },

    /** On an empty store creates the organization, owner, default project and both keys. */
    async bootstrap(keys: { projectApiKey: string | null; personalApiKey: string | null }): Promise<BootstrapResult> {
      if (!(await store.isEmpty())) return { created: false }
      const projectApiKey = keys.projectApiKey ?? generateToken('phc_')
      const personalApiKey = keys.personalApiKey ?? generateToken('phx_')
      const { project, user } = await store.bootstrap({
        organizationName: 'Default organization',
        projectName: 'Default project',
        projectApiToken: projectApiKey,
        user: { email: 'owner@tally.local', firstName: 'Owner' },
        personalKey: { hash: hashSecret(personalApiKey), mask: maskSecret(personalApiKey), label: 'bootstrap' },
      })
      remember(project)
      return { created: true, project, user, projectApiKey, personalApiKey }
    },

    /** The project whose API token this is, or null. Memory first; see the class comment. */
    async findProjectByToken(token: string): Promise<Project | null> {
      const hit = byToken.get(token)
      if (hit) return hit
      const missedAt = missingTokens.get(token)
      if (missedAt !== undefined && clock.now() - missedAt < NEGATIVE_TTL_MS) return null
      const found = await store.findProjectByToken(token)
      if (found) remember(found)
      else {
        if (missingTokens.size >= NEGATIVE_MAX) missingTokens.clear()
        missingTokens.set(token, clock.now())
      }
      return found
    },

    /** The project for a token if it is already in memory: the synchronous fast path. */
    cachedProjectByToken(token: string): Project | undefined {
      return byToken.get(token)
    },

    /** The user owning a personal API key, or an `invalid_personal_api_key` error. */
    async authenticatePersonalKey(key: string): Promise<User> {
      const hash = hashSecret(key)
      const cached = userByKeyHash.get(hash)
      if (cached) return cached
      const user = await store.findUserByPersonalKeyHash(hash)
      if (!user) throw new AppError('invalid_personal_api_key', 'Personal API key is invalid.')
      if (userByKeyHash.size > 10_000) userByKeyHash.clear()
      userByKeyHash.set(hash, user)
      return user
    },

    /** A project with its own API token; `settings` (timezone checked first) applied before it is returned. */
    async createProject(name: string, organizationId?: number, settings: Omit<ProjectSettingsInput, 'name'> = {}): Promise<{ project: Project; apiToken: string }> {
      if (settings.timezone !== undefined) assertTimeZone(settings.timezone, 'timezone')
      const owner = await store.firstUser()
      if (!owner) throw new AppError('not_found', 'Tally has not been initialised: run `tally serve` once first.')
      const apiToken = generateToken('phc_')
      let project = await store.createProject({ organizationId: organizationId ?? owner.organizationId, name, apiToken })
      if (settings.timezone !== undefined || settings.sdk || settings.sessionRecording) project = await store.updateSettings(project.id, settings)
      remember(project)
      return { project, apiToken }
    },

    createPersonalKey,

    /**
     * Adds a user to the owner's organization with membership of the given projects only, and a
     * personal API key for them (returned once).
     */
    async createUser(input: { email: string; firstName: string; projectIds: number[] }): Promise<{ user: User; key: string }> {
      const owner = await store.firstUser()
      if (!owner) throw new AppError('not_found', 'Tally has not been initialised.')
      const user = await store.createUser({ organizationId: owner.organizationId, email: input.email, firstName: input.firstName })
      for (const id of input.projectIds) await store.addMember(id, user.id, 1)
      const { key } = await createPersonalKey(user.id)
      return { user: { ...user, currentProjectId: input.projectIds[0] ?? null }, key }
    },

    /** A new API token for the project (PostHog's `reset_token`); the old one stops working at once. */
    async resetApiToken(project: Project): Promise<Project> {
      const updated = await store.updateApiToken(project.id, generateToken('phc_'))
      byToken.delete(project.apiToken)
      remember(updated)
      return updated
    },

    /** The project with its settings as remote config must see them (see the function). */
    currentSettingsOf,

    /**
     * A project by id with its settings as current as `currentSettingsOf` keeps them (the ingestion
     * worker reads `anonymize_ips` and `geoip_enabled` per micro-batch); null when there is none.
     */
    async projectById(projectId: number): Promise<Project | null> {
      const known = settingsReadAt.get(projectId)
      if (known) return currentSettingsOf(known.project)
      const found = await store.findProjectById(projectId)
      if (found) remember(found)
      return found
    },

    /** Which of these projects have had an event ingested (PostHog's `ingested_event`). */
    projectsWithEvents: (projectIds: readonly number[]) => store.projectsWithEvents(projectIds),

    /** PATCH of the project's settings; `timezone` must be an IANA zone (queries bucket days in it). */
    async updateSettings(project: Project, input: ProjectSettingsInput): Promise<Project> {
      if (input.timezone !== undefined) assertTimeZone(input.timezone, 'timezone')
      const updated = await store.updateSettings(project.id, input)
      remember(updated)
      return updated
    },

    /** Drops what is cached of this project (another process changed its token or settings): the next use reads the store. */
    forgetProject(projectId: number): void {
      for (const [token, p] of byToken) if (p.id === projectId) byToken.delete(token)
      settingsReadAt.delete(projectId)
    },

    /** Drops the cached users of personal keys of this user (a key was revoked, the user removed). */
    forgetPersonalKeysOf(userId: number): void {
      for (const [hash, user] of userByKeyHash) if (user.id === userId) userByKeyHash.delete(hash)
    },

    /** The owner made at first start (the CLI acts as this user). */
    firstUser: () => store.firstUser(),
    listProjects: () => store.listProjects(),
    listProjectsOfUser: (userId: number) => store.listProjectsOfUser(userId),
    /** The user's level in the project (1 member, 8 admin, 15 owner); null when not a member. */
    memberLevel: (projectId: number, userId: number) => store.memberLevel(projectId, userId),

    /**
     * The project a private-API path names (`@current` = the user's current project). Missing, malformed
     * or not a member: `not_found`, never another project's data.
     */
    async resolveProjectOfUser(user: User, projectIdParam: string): Promise<Project> {
      const id = projectIdParam === '@current' ? user.currentProjectId : /^\d+$/.test(projectIdParam) ? Number(projectIdParam) : null
      const project = id === null || id > 2_147_483_647 ? null : await store.findProjectOfUser(user.id, id)
      if (!project) throw new AppError('not_found', 'Not found.')
      return project
    },
  }
}

export type ProjectService = ReturnType<typeof createProjectService>
