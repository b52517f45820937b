import { checkTokenShape } from '../../domain/events/index.ts'
import { AppError } from '../../shared/errors.ts'
import type { ProjectService } from './project-service.ts'
import type { Project } from './project-types.ts'

const MISSING_KEY = 'API key not provided. You can find your project API key in PostHog project settings.'
const INVALID_KEY = 'Project API key invalid. You can find your project API key in PostHog project settings.'

/**
 * The project a public request (capture, decide) is for, from the key it carried:
 * - a project API key: looked up in the in-memory token cache (a miss is remembered, so a flood
 *   of bad keys costs no queries); unknown -> 401 `invalid_api_key`;
 * - a personal API key (`phx_...`), which the spec also accepts: its user must be a member of the
 *   project named by `projectId` (body or query `project_id`); a wrong key -> 401
 *   `invalid_personal_api_key`, no or a foreign project -> 400 `invalid_project` (PostHog's
 *   older capture did the same);
 * - none -> 401 `missing_api_key`; a malformed key -> 401 with the shape problem as code.
 */
export async function resolvePublicProject(projects: ProjectService, token: string | null, projectId?: unknown): Promise<Project> {
  if (token === null) throw new AppError('invalid_api_key', MISSING_KEY, null, { subCode: 'missing_api_key' })
  if (token.startsWith('phx_')) return resolveByPersonalKey(projects, token, projectId)
  const cached = projects.cachedProjectByToken(token)
  if (cached) return cached
  const problem = checkTokenShape(token)
  if (problem) throw new AppError('invalid_api_key', `Provided API key is not valid: ${problem}`, null, { subCode: problem })
  const found = await projects.findProjectByToken(token)
  if (!found) throw new AppError('invalid_api_key', INVALID_KEY)
  return found
}

async function resolveByPersonalKey(projects: ProjectService, key: string, projectId: unknown): Promise<Project> {
  const user = await projects.authenticatePersonalKey(key)
  const id = typeof projectId === 'number' ? String(projectId) : typeof projectId === 'string' ? projectId.trim() : ''
  if (id === '') {
    throw new AppError(
      'invalid_project',
      'Project ID not provided. Requests with a personal API key must name the project in `project_id`.',
      'project_id',
    )
  }
  try {
    return await projects.resolveProjectOfUser(user, id)
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') throw new AppError('invalid_project', 'Invalid Project ID.', 'project_id')
    throw err
  }
}
