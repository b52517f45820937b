import type { FastifyInstance } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import { installPublicScope } from '../../http/public-scope.ts'
import { readToken } from '../decide/decide-request.ts'
import type { ProjectService } from '../projects/project-service.ts'

export interface SurveyRouteOptions {
  projects: ProjectService
  maxBodyBytes: number
}

/**
 * `GET /api/surveys/?token=` (posthog-js `getSurveys()`), PostHog's public `surveys` view
 * (`posthog/api/survey.py`): the project's surveys and its `survey_config`, with CORS. Tally has no
 * surveys, so a known project gets `{"surveys": [], "survey_config": null}`, which is what PostHog
 * answers for a project without any; no token or an unknown one is PostHog's 401.
 */
export async function surveyRoutes(app: FastifyInstance, opts: SurveyRouteOptions): Promise<void> {
  installPublicScope(app, { maxBodyBytes: opts.maxBodyBytes })
  const handler = async (req: { query: unknown }) => {
    const token = readToken({}, {}, req.query as Record<string, unknown>)
    if (!token) {
      throw new AppError('invalid_api_key', 'API key not provided. You can find your project API key in your PostHog project settings.', null, {
        subCode: 'missing_api_key',
      })
    }
    const project = opts.projects.cachedProjectByToken(token) ?? (await opts.projects.findProjectByToken(token))
    if (!project) throw new AppError('invalid_api_key', 'Project API key invalid. You can find your project API key in your PostHog project settings.')
    return { surveys: [], survey_config: null }
  }
  for (const url of ['/api/surveys', '/api/surveys/']) {
    app.get(url, handler)
    // PostHog answers the preflight with an empty 200 (CORS headers set by the public scope).
    app.options(url, async (_req, reply) => reply.code(200).send(''))
  }
}
