import type { TestApp } from './test-app.ts'

type Headers = Record<string, string>

/** Short-hands for the private API of a test app, as the bootstrap user (or the given headers). */
export function privateApi(app: TestApp, headers: Headers = app.auth, projectId: number | string = app.projectId) {
  const base = `/api/projects/${projectId}`
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown) =>
    app.http.inject({ method, url: `${base}${path}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
  return {
    base,
    get: (path: string) => call('GET', path),
    post: (path: string, payload: unknown = {}) => call('POST', path, payload),
    patch: (path: string, payload: unknown = {}) => call('PATCH', path, payload),
    delete: (path: string) => call('DELETE', path),
    /** A raw body with a JSON content type (malformed JSON tests). */
    raw: (method: 'POST' | 'PATCH', path: string, body: string) =>
      app.http.inject({ method, url: `${base}${path}`, headers: { ...headers, 'content-type': 'application/json' }, payload: body }),
  }
}

/** A second project and a member-level user who belongs only to it, with their own key. */
export async function strangerWithProject(app: TestApp) {
  const other = await app.services.projects.createProject('Other project')
  const stranger = await app.services.projects.createUser({ email: `s${Date.now()}@x.io`, firstName: 'Stranger', projectIds: [other.project.id] })
  return { projectId: other.project.id, user: stranger.user, headers: { authorization: `Bearer ${stranger.key}` } }
}
