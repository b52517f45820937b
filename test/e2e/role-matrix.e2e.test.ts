import assert from 'node:assert/strict'
import { test } from 'node:test'
import { privateApi } from '../helpers/private-api.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// Roles as PostHog's membership levels (member 1, admin 8, owner 15), in a project created AFTER the
// member and the admin joined the organisation (PostHog's UserTeamPermissions: a project without access
// control gives each member their organisation level; Tally gave everyone 8 there).

type Role = 'member' | 'admin' | 'owner'
const ROLES: readonly Role[] = ['member', 'admin', 'owner']

/**
 * Who may use each private write route: `all` (any member of the project) or `admin` (admins and
 * owners). Every write route the server has must be listed here: a new one fails the test until it is.
 */
const WHO_MAY: Record<string, 'all' | 'admin'> = {
  // PostHog: creating a project needs an organisation admin ("Your organization access level is insufficient.").
  'POST /api/projects/': 'admin',
  'POST /api/organizations/:organization_id/projects/': 'admin',
  'PATCH /api/projects/:project_id/': 'admin',
  'DELETE /api/projects/:project_id/session_recordings/:session_id/': 'all',
  'POST /api/user/test_slack_webhook/': 'all',
  'PATCH /api/projects/:project_id/reset_token/': 'admin',
  'POST /api/projects/:project_id/persons/': 'all',
  'PATCH /api/projects/:project_id/persons/:id/': 'all',
  'PUT /api/projects/:project_id/persons/:id/': 'all',
  'DELETE /api/projects/:project_id/persons/:id/': 'all',
  'POST /api/projects/:project_id/persons/:id/update_property/': 'all',
  'POST /api/projects/:project_id/persons/:id/delete_property/': 'all',
  'POST /api/projects/:project_id/groups_types/': 'all',
  'PATCH /api/projects/:project_id/groups_types/update_metadata/': 'all',
  'POST /api/projects/:project_id/insights/': 'all',
  'PATCH /api/projects/:project_id/insights/:id/': 'all',
  'DELETE /api/projects/:project_id/insights/:id/': 'all',
  'POST /api/projects/:project_id/query/': 'all',
  'POST /api/environments/:project_id/query/': 'all',
  'POST /api/projects/:project_id/dashboards/': 'all',
  'POST /api/projects/:project_id/dashboards/create_from_template_json/': 'all',
  'PATCH /api/projects/:project_id/dashboards/:id/': 'all',
  'DELETE /api/projects/:project_id/dashboards/:id/': 'all',
  'PATCH /api/projects/:project_id/dashboards/:id/move_tile/': 'all',
  'POST /api/projects/:project_id/dead_letters/replay/': 'admin',
  'POST /api/projects/:project_id/destinations/': 'all',
  'PATCH /api/projects/:project_id/destinations/:id/': 'all',
  'DELETE /api/projects/:project_id/destinations/:id/': 'all',
  'POST /api/projects/:project_id/destinations/:id/test/': 'all',
  'POST /api/projects/:project_id/destinations/:id/replay/': 'all',
  'POST /api/projects/:project_id/actions/': 'all',
  'PATCH /api/projects/:project_id/actions/:id/': 'all',
  'DELETE /api/projects/:project_id/actions/:id/': 'all',
  'POST /api/projects/:project_id/feature_flags/': 'all',
  'PATCH /api/projects/:project_id/feature_flags/:id/': 'all',
  'PUT /api/projects/:project_id/feature_flags/:id/': 'all',
  'DELETE /api/projects/:project_id/feature_flags/:id/': 'all',
  'POST /api/projects/:project_id/cohorts/': 'all',
  'PATCH /api/projects/:project_id/cohorts/:id/': 'all',
  'DELETE /api/projects/:project_id/cohorts/:id/': 'all',
  'PATCH /api/projects/:project_id/cohorts/:id/add_persons_to_static_cohort/': 'all',
  'POST /api/personal_api_keys/': 'all',
  'DELETE /api/personal_api_keys/:id/': 'all',
  'PATCH /api/users/@me/': 'all',
  'PATCH /api/organizations/:organization_id/members/:user_uuid/': 'admin',
  'DELETE /api/organizations/:organization_id/members/:user_uuid/': 'admin',
  'POST /api/organizations/:organization_id/invites/': 'admin',
  'DELETE /api/organizations/:organization_id/invites/:id/': 'admin',
}

// Signed-out routes (sign-in, set-up, sign-up, sign-out) and the public SDK routes take no role.
const NOT_ROLE_ROUTES = /^(POST|PATCH|PUT|DELETE) \/(api\/(setup|signup|login|logout)\/|(e|engage|i\/v0\/e|capture|batch|track|decide|flags|s)\/)$/

/** Every write route of the server, from Fastify's route tree (`METHOD /path/`, trailing-slash forms). */
function writeRoutes(app: TestApp): string[] {
  const out: string[] = []
  const stack: string[] = []
  for (const line of app.http.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^(.*?)(?:├── |└── )(.*) \(([A-Z, ]+)\)$/.exec(line)
    if (!m) continue
    const depth = m[1]!.length / 4
    stack.length = depth
    const path = (depth > 0 ? stack[depth - 1]! : '') + m[2]!
    stack[depth] = path
    if (!path.endsWith('/')) continue
    for (const method of m[3]!.split(', ')) if (['POST', 'PATCH', 'PUT', 'DELETE'].includes(method)) out.push(`${method} ${path}`)
  }
  return out.filter((r) => !NOT_ROLE_ROUTES.test(r))
}

/** An owner, then a member and an admin who join the organisation, then a project created after them. */
async function organisation(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t)
  const owner = app.auth
  const member = await app.services.projects.createUser({ email: 'member@example.com', firstName: 'Mem', projectIds: [] })
  const admin = await app.services.projects.createUser({ email: 'admin@example.com', firstName: 'Ada', projectIds: [] })
  const target = await app.services.projects.createUser({ email: 'target@example.com', firstName: 'Tia', projectIds: [] })
  const promoted = await app.http.inject({ method: 'PATCH', url: `/api/organizations/@current/members/${admin.user.uuid}/`, headers: owner, payload: { level: 8 } })
  assert.equal(promoted.statusCode, 200, promoted.body)
  const { project } = await app.services.projects.createProject('Created later')
  const headers: Record<Role, { authorization: string }> = { owner, member: { authorization: `Bearer ${member.key}` }, admin: { authorization: `Bearer ${admin.key}` } }
  return { app, project, headers, targetUuid: target.user.uuid }
}

test("in a project created after they joined, a member cannot edit the owner's restricted dashboard or replay dead letters; an admin can", async (t) => {
  const { app, project, headers } = await organisation(t)
  const api = (role: Role) => privateApi(app, headers[role], project.id)
  const created = await api('owner').post('/dashboards/', { name: 'Board', restriction_level: 37 })
  assert.equal(created.statusCode, 201, created.body)
  const id = created.json().id
  assert.equal((await api('member').get(`/dashboards/${id}/`)).json().effective_privilege_level, 21)
  const byMember = await api('member').patch(`/dashboards/${id}/`, { name: 'Mine now' })
  assert.equal(byMember.statusCode, 403, byMember.body)
  assert.equal(byMember.json().code, 'permission_denied')
  assert.equal((await api('admin').patch(`/dashboards/${id}/`, { name: 'Renamed by the admin' })).statusCode, 200)

  const replayByMember = await api('member').post('/dead_letters/replay/', {})
  assert.equal(replayByMember.statusCode, 403, replayByMember.body)
  assert.equal(replayByMember.json().type, 'authentication_error')
  assert.equal((await api('admin').post('/dead_letters/replay/', {})).statusCode, 200)
  assert.equal((await api('owner').post('/dead_letters/replay/', {})).statusCode, 200)
})

test('every private write route, as member, admin and owner, against the table of who may do what', async (t) => {
  const { app, project, headers, targetUuid } = await organisation(t)
  const routes = writeRoutes(app)
  assert.deepEqual(routes.filter((r) => !(r in WHO_MAY)), [], 'write routes missing from the table')
  assert.deepEqual(Object.keys(WHO_MAY).filter((r) => !routes.includes(r)), [], 'table rows with no route')

  // Real records for :id, made by the owner (the checks must not stop at a 404).
  const owner = privateApi(app, headers.owner, project.id)
  const ids: Record<string, string> = {}
  for (const [resource, body] of Object.entries({ insights: { name: 'i' }, dashboards: { name: 'd' }, actions: { name: 'a' }, feature_flags: { key: 'f' }, cohorts: { name: 'c', is_static: true } })) {
    const res = await owner.post(`/${resource}/`, body)
    assert.equal(res.statusCode, 201, `${resource}: ${res.body}`)
    ids[resource] = String(res.json().id)
  }
  const pathOf = (route: string) => {
    const resource = /\/api\/projects\/:project_id\/([a-z_]+)\/:id/.exec(route)?.[1]
    return route.split(' ')[1]!
      .replace(':project_id', String(project.id))
      .replace(':organization_id', '@current')
      .replace(':user_uuid', targetUuid)
      .replace(':session_id', 'no-such-session')
      .replace(':id', (resource && ids[resource]) ?? '999999')
  }
  // Valid bodies where the route reads its body before it checks the role.
  const bodyOf = (route: string) =>
    route.includes('/members/') && route.startsWith('PATCH') ? { level: 1 } : route.startsWith('POST') && route.endsWith('/invites/') ? { target_email: 'new@example.com', level: 1 } : {}

  const mismatches: string[] = []
  // Members first: what an admin or owner may then delete is still there when a member is refused.
  for (const role of ROLES) {
    for (const route of routes) {
      const method = route.split(' ')[0] as 'POST' | 'PATCH' | 'PUT' | 'DELETE'
      const res = await app.http.inject({ method, url: pathOf(route), headers: headers[role], payload: bodyOf(route) })
      assert.ok(res.statusCode < 500, `${role} ${route}: ${res.statusCode} ${res.body}`)
      const denied = res.statusCode === 403
      const shouldDeny = WHO_MAY[route] === 'admin' && role === 'member'
      if (denied !== shouldDeny) mismatches.push(`${role} ${route}: ${res.statusCode} ${res.body.slice(0, 120)}`)
    }
  }
  assert.deepEqual(mismatches, [])
})
