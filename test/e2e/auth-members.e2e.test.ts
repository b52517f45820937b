import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { browserOf, setUpOwner, signIn, type Browser } from '../helpers/sessions.ts'

type Headers = Record<string, string>
const ORG = '/api/organizations/@current'

function call(app: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) {
  return app.http.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
}

/** Owner invites `email` at `level`; the invitee signs up through the link and is signed in. */
async function inviteAndSignUp(app: TestApp, owner: Browser, email: string, level: number): Promise<Browser> {
  const inv = await call(app, 'POST', `${ORG}/invites/`, owner.headers, { target_email: email, level })
  assert.equal(inv.statusCode, 201, inv.body)
  const token = new URL(inv.json().invite_url).searchParams.get('invite')!
  const res = await call(app, 'POST', '/api/signup/', {}, { invite_token: token, password: 'member password', first_name: 'Mem' })
  assert.equal(res.statusCode, 201, res.body)
  return browserOf(res)
}

function assertDenied(res: { statusCode: number; json(): any; body: string }, what: string) {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`)
  assert.equal(res.json().code, 'permission_denied', what)
}

test('members: set-up link is single use; GET tells whether it is valid', async (t) => {
  const app = await buildTestApp(t)
  const token = await app.services.auth.createSetupToken()
  assert.deepEqual((await call(app, 'GET', `/api/setup/?token=${token}`, {})).json(), { valid: true })
  assert.deepEqual((await call(app, 'GET', '/api/setup/?token=nope', {})).json(), { valid: false })
  const short = await call(app, 'POST', '/api/setup/', {}, { token, email: 'o@example.com', password: 'short', first_name: 'O' })
  assert.equal(short.statusCode, 400)
  assert.equal(short.json().attr, 'password')
  const badEmail = await call(app, 'POST', '/api/setup/', {}, { token, email: 'not-an-email', password: 'long enough', first_name: 'O' })
  assert.equal(badEmail.json().attr, 'email')
  const ok = await call(app, 'POST', '/api/setup/', {}, { token, email: 'O@Example.com', password: 'long enough', first_name: 'O' })
  assert.equal(ok.statusCode, 200, ok.body)
  assert.equal(ok.json().email, 'o@example.com')
  assert.equal(ok.json().organization.membership_level, 15, 'the bootstrap user is the owner')
  assert.equal((await call(app, 'GET', '/api/users/@me/', { cookie: browserOf(ok).cookie })).statusCode, 200)
  assert.deepEqual((await call(app, 'GET', `/api/setup/?token=${token}`, {})).json(), { valid: false })
  const again = await call(app, 'POST', '/api/setup/', {}, { token, email: 'x@example.com', password: 'long enough', first_name: 'X' })
  assert.equal(again.statusCode, 400)
  assert.equal(again.json().attr, 'token')
})

test('members: invite -> sign-up -> sign in as the member; the invite is used once; members are listed with levels', async (t) => {
  const app = await buildTestApp(t)
  const owner = await setUpOwner(app)
  const inv = await call(app, 'POST', `${ORG}/invites/`, owner.headers, { target_email: 'Mia@Example.com', level: 1 })
  assert.equal(inv.statusCode, 201, inv.body)
  const invite = inv.json()
  assert.equal(invite.target_email, 'mia@example.com')
  assert.equal(invite.level, 1)
  assert.ok(Date.parse(invite.expires_at) > Date.parse(invite.created_at))
  const link = new URL(invite.invite_url)
  assert.equal(link.pathname, '/signup')
  const token = link.searchParams.get('invite')!
  const listed = await call(app, 'GET', `${ORG}/invites/`, owner.headers)
  assert.equal(listed.json().count, 1)
  assert.equal(listed.json().results[0].invite_url, undefined, 'the token is shown once')

  const info = await call(app, 'GET', `/api/signup/invite/?token=${encodeURIComponent(token)}`, {})
  assert.deepEqual(info.json(), { valid: true, target_email: 'mia@example.com', organization_name: 'Default organization', level: 1 })
  const wrongEmail = await call(app, 'POST', '/api/signup/', {}, { invite_token: token, email: 'eve@example.com', password: 'member password', first_name: 'Eve' })
  assert.equal(wrongEmail.statusCode, 400)
  assert.equal(wrongEmail.json().attr, 'email')
  const signup = await call(app, 'POST', '/api/signup/', {}, { invite_token: token, password: 'member password', first_name: 'Mia' })
  assert.equal(signup.statusCode, 201, signup.body)
  assert.equal(signup.json().organization.membership_level, 1)
  assert.equal(signup.json().team.id, app.projectId, 'the member sees the organization\'s project')
  assert.equal((await call(app, 'GET', `/api/signup/invite/?token=${encodeURIComponent(token)}`, {})).json().valid, false)
  const reuse = await call(app, 'POST', '/api/signup/', {}, { invite_token: token, password: 'member password', first_name: 'Again' })
  assert.equal(reuse.statusCode, 400)
  assert.equal(reuse.json().attr, 'invite_token')

  const mia = await signIn(app, 'mia@example.com', 'member password')
  const events = await call(app, 'GET', `/api/projects/${app.projectId}/actions/`, { cookie: mia.cookie })
  assert.equal(events.statusCode, 200)
  const members = await call(app, 'GET', `${ORG}/members/`, mia.headers)
  assert.equal(members.statusCode, 200)
  assert.deepEqual(members.json().results.map((m: any) => [m.user.email, m.level]), [['owner@example.com', 15], ['mia@example.com', 1]])
  assert.equal(typeof members.json().results[0].joined_at, 'string')
  assert.equal((await call(app, 'GET', `${ORG}/invites/`, owner.headers)).json().count, 0)
})

test('members: a member cannot manage members, invites, the project key or settings, nor revoke another\'s key', async (t) => {
  const app = await buildTestApp(t)
  const owner = await setUpOwner(app)
  const member = await inviteAndSignUp(app, owner, 'mem@example.com', 1)
  const ownerUuid = (await call(app, 'GET', '/api/users/@me/', owner.headers)).json().uuid
  assertDenied(await call(app, 'POST', `${ORG}/invites/`, member.headers, { target_email: 'x@example.com' }), 'invite')
  assertDenied(await call(app, 'GET', `${ORG}/invites/`, member.headers), 'list invites')
  assertDenied(await call(app, 'PATCH', `${ORG}/members/${ownerUuid}/`, member.headers, { level: 1 }), 'change a level')
  assertDenied(await call(app, 'DELETE', `${ORG}/members/${ownerUuid}/`, member.headers), 'remove the owner')
  assertDenied(await call(app, 'PATCH', `/api/projects/${app.projectId}/reset_token/`, member.headers), 'rotate the project key')
  for (const url of [`/api/projects/${app.projectId}/`, `/api/projects/${app.projectId}`, '/api/projects/@current/']) {
    assertDenied(await call(app, 'PATCH', url, member.headers, { name: 'Mine now', timezone: 'Europe/Paris' }), `project settings ${url}`)
  }
  const project = (await call(app, 'GET', `/api/projects/${app.projectId}/`, member.headers)).json()
  assert.equal(project.name, 'Default project', 'members read the settings; nothing changed')
  assert.equal(project.timezone, 'UTC')
  const byOwner = await call(app, 'PATCH', `/api/projects/${app.projectId}/`, owner.headers, { timezone: 'Europe/Paris' })
  assert.equal(byOwner.statusCode, 200, byOwner.body)
  assert.equal(byOwner.json().timezone, 'Europe/Paris')

  // Keys: the member manages their own, and cannot see or revoke the owner's.
  const ownerKeys = (await call(app, 'GET', '/api/personal_api_keys/', app.auth)).json()
  assert.equal(ownerKeys.length, 1)
  const revoke = await call(app, 'DELETE', `/api/personal_api_keys/${ownerKeys[0].id}/`, member.headers)
  assert.equal(revoke.statusCode, 404)
  assert.equal((await call(app, 'GET', `/api/personal_api_keys/${ownerKeys[0].id}/`, member.headers)).statusCode, 404)
  assert.equal((await call(app, 'GET', '/api/users/@me/', app.auth)).statusCode, 200, 'the owner\'s key still works')
  assert.deepEqual((await call(app, 'GET', '/api/personal_api_keys/', member.headers)).json(), [])
  const mine = await call(app, 'POST', '/api/personal_api_keys/', member.headers, { label: 'laptop' })
  assert.equal(mine.statusCode, 201, mine.body)
  assert.equal(mine.json().label, 'laptop')
  assert.match(mine.json().value, /^phx_/)
  assert.equal(mine.json().mask_value, `${mine.json().value.slice(0, 4)}...${mine.json().value.slice(-4)}`)
  const asKey = await call(app, 'GET', '/api/users/@me/', { authorization: `Bearer ${mine.json().value}` })
  assert.equal(asKey.json().email, 'mem@example.com')
  const list = (await call(app, 'GET', '/api/personal_api_keys/', member.headers)).json()
  assert.deepEqual(list.map((k: any) => [k.id, k.label, 'value' in k]), [[mine.json().id, 'laptop', false]])
  assert.equal((await call(app, 'DELETE', `/api/personal_api_keys/${mine.json().id}/`, member.headers)).statusCode, 204)
  assert.equal((await call(app, 'GET', '/api/users/@me/', { authorization: `Bearer ${mine.json().value}` })).statusCode, 401, 'a revoked key stops at once')
})

test('members: owners and admins rotate the project key (the old key stops resolving at once) and change settings', async (t) => {
  const app = await buildTestApp(t)
  const owner = await setUpOwner(app)
  const admin = await inviteAndSignUp(app, owner, 'adm@example.com', 8)
  const res = await call(app, 'PATCH', `/api/projects/${app.projectId}/reset_token/`, admin.headers)
  assert.equal(res.statusCode, 200, res.body)
  const fresh = res.json().api_token
  assert.match(fresh, /^phc_/)
  assert.notEqual(fresh, app.projectKey)
  const capture = (key: string) => call(app, 'POST', '/e/', {}, { api_key: key, event: 'e', distinct_id: 'd' })
  assert.equal((await capture(app.projectKey)).statusCode, 401)
  assert.equal((await capture(fresh)).statusCode, 200)
  const renamed = await call(app, 'PATCH', `/api/projects/${app.projectId}/`, admin.headers, { name: 'Shop' })
  assert.equal(renamed.statusCode, 200, 'admins change project settings')
  assert.equal(renamed.json().name, 'Shop')
})

test('members: level changes and removal follow PostHog\'s rules; a removed member\'s session and keys stop working', async (t) => {
  const app = await buildTestApp(t)
  const owner = await setUpOwner(app)
  const admin = await inviteAndSignUp(app, owner, 'adm@example.com', 8)
  const member = await inviteAndSignUp(app, owner, 'mem@example.com', 1)
  const uuidOf = async (b: Browser) => (await call(app, 'GET', '/api/users/@me/', { cookie: b.cookie })).json().uuid
  const [ownerUuid, adminUuid, memberUuid] = [await uuidOf(owner), await uuidOf(admin), await uuidOf(member)]

  assertDenied(await call(app, 'POST', `${ORG}/invites/`, admin.headers, { target_email: 'boss@example.com', level: 15 }), 'admin invites an owner')
  assertDenied(await call(app, 'PATCH', `${ORG}/members/${memberUuid}/`, admin.headers, { level: 15 }), 'admin makes an owner')
  assertDenied(await call(app, 'DELETE', `${ORG}/members/${ownerUuid}/`, admin.headers), 'admin removes the owner')
  assertDenied(await call(app, 'PATCH', `${ORG}/members/${ownerUuid}/`, owner.headers, { level: 8 }), 'own level')
  assertDenied(await call(app, 'DELETE', `${ORG}/members/${ownerUuid}/`, owner.headers), 'the last owner leaves')
  const badLevel = await call(app, 'PATCH', `${ORG}/members/${memberUuid}/`, admin.headers, { level: 3 })
  assert.equal(badLevel.statusCode, 400)
  assert.equal(badLevel.json().code, 'invalid_choice')
  assert.equal(badLevel.json().attr, 'level')
  assert.equal((await call(app, 'PATCH', `${ORG}/members/00000000-0000-0000-0000-000000000000/`, admin.headers, { level: 1 })).statusCode, 404)
  assert.equal((await call(app, 'GET', '/api/organizations/some-other-org/members/', admin.headers)).statusCode, 404)

  const promoted = await call(app, 'PATCH', `${ORG}/members/${memberUuid}/`, admin.headers, { level: 8 })
  assert.equal(promoted.statusCode, 200, promoted.body)
  assert.equal(promoted.json().level, 8)
  assert.equal((await call(app, 'GET', '/api/users/@me/', { cookie: member.cookie })).json().organization.membership_level, 8)
  assert.equal((await call(app, 'PATCH', `${ORG}/members/${memberUuid}/`, admin.headers, { level: 1 })).statusCode, 200)

  const key = (await call(app, 'POST', '/api/personal_api_keys/', member.headers, { label: 'k' })).json().value
  assert.equal((await call(app, 'DELETE', `${ORG}/members/${memberUuid}/`, admin.headers)).statusCode, 204)
  assert.equal((await call(app, 'GET', '/api/users/@me/', { cookie: member.cookie })).statusCode, 401)
  assert.equal((await call(app, 'GET', '/api/users/@me/', { authorization: `Bearer ${key}` })).statusCode, 401)
  const signInAgain = await call(app, 'POST', '/api/login/', {}, { email: 'mem@example.com', password: 'member password' })
  assert.equal(signInAgain.statusCode, 400)
  const listed = (await call(app, 'GET', `${ORG}/members/`, owner.headers)).json()
  assert.deepEqual(listed.results.map((m: any) => m.user.uuid).sort(), [ownerUuid, adminUuid].sort())

  // Re-invited, the same person comes back as the same user.
  const back = await inviteAndSignUp(app, owner, 'mem@example.com', 1)
  assert.equal(await uuidOf(back), memberUuid)
})

test('members: invite validation, replacement and deletion', async (t) => {
  const app = await buildTestApp(t)
  const owner = await setUpOwner(app)
  const bad = await call(app, 'POST', `${ORG}/invites/`, owner.headers, { target_email: 'nope' })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'target_email')
  const self = await call(app, 'POST', `${ORG}/invites/`, owner.headers, { target_email: 'owner@example.com' })
  assert.equal(self.statusCode, 400, 'already a member')
  const first = (await call(app, 'POST', `${ORG}/invites/`, owner.headers, { target_email: 'a@example.com' })).json()
  const second = (await call(app, 'POST', `${ORG}/invites/`, owner.headers, { target_email: 'a@example.com', level: 8 })).json()
  const list = (await call(app, 'GET', `${ORG}/invites/`, owner.headers)).json()
  assert.deepEqual(list.results.map((i: any) => [i.id, i.level]), [[second.id, 8]], 'a new invite replaces the pending one')
  const oldToken = new URL(first.invite_url).searchParams.get('invite')!
  assert.equal((await call(app, 'GET', `/api/signup/invite/?token=${oldToken}`, {})).json().valid, false)
  assert.equal((await call(app, 'DELETE', `${ORG}/invites/${second.id}/`, owner.headers)).statusCode, 204)
  assert.equal((await call(app, 'DELETE', `${ORG}/invites/${second.id}/`, owner.headers)).statusCode, 404)
  assert.equal((await call(app, 'DELETE', `${ORG}/invites/not-a-uuid/`, owner.headers)).statusCode, 404)
  const token = new URL(second.invite_url).searchParams.get('invite')!
  const signup = await call(app, 'POST', '/api/signup/', {}, { invite_token: token, password: 'long enough', first_name: 'A' })
  assert.equal(signup.statusCode, 400, 'a deleted invite cannot be used')
})
