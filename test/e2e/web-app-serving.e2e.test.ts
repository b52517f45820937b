import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { brotliCompressSync } from 'node:zlib'
import Fastify from 'fastify'
import { installErrorHandler } from '../../src/http/error-handler.ts'
import { webAppRoutes } from '../../src/modules/web-app/web-app-routes.ts'
import { buildTestApp } from '../helpers/test-app.ts'

async function serve(t: TestContext, files: Record<string, string | Buffer>) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-web-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  for (const [name, body] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true })
    await writeFile(path.join(dir, name), body)
  }
  const app = Fastify()
  installErrorHandler(app)
  await app.register(webAppRoutes, { dir })
  t.after(() => app.close())
  return app
}

const SCRIPT = 'console.log("tally web app")'.repeat(20)

test('the built app: index.html for the app\'s own paths (never cached), hashed assets cached for a year and pre-compressed', async (t) => {
  const app = await serve(t, {
    'index.html': '<!doctype html><div id="root"></div>',
    'assets/index-AbC123.js': SCRIPT,
    'assets/index-AbC123.js.br': brotliCompressSync(SCRIPT),
  })
  for (const url of ['/', '/activity', '/persons/0190-abc', '/feature_flags/12', '/settings?tab=keys', '/signup?invite=x', '/web?date_from=-30d', '/sessions/0190-abc']) {
    const res = await app.inject({ url })
    assert.equal(res.statusCode, 200, url)
    assert.match(String(res.headers['content-type']), /^text\/html/, url)
    assert.equal(res.headers['cache-control'], 'no-cache', url)
    assert.match(res.body, /id="root"/)
  }
  const plain = await app.inject({ url: '/assets/index-AbC123.js' })
  assert.equal(plain.statusCode, 200)
  assert.equal(plain.body, SCRIPT)
  assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
  const br = await app.inject({ url: '/assets/index-AbC123.js', headers: { 'accept-encoding': 'br' } })
  assert.equal(br.headers['content-encoding'], 'br')
  assert.ok(br.rawPayload.length < SCRIPT.length, `${br.rawPayload.length} compressed bytes for ${SCRIPT.length}`)
  const missing = await app.inject({ url: '/assets/nope-123.js' })
  assert.equal(missing.statusCode, 404)
  assert.equal(missing.json().code, 'not_found')
})

test('paths outside the app keep their JSON 404 (an API client never gets HTML)', async (t) => {
  const app = await serve(t, { 'index.html': '<!doctype html>' })
  for (const url of ['/api/nothing/', '/api/projects/1/nothing/', '/capture/x', '/_nothing', '/activityx', '/e/x/y', '/static/x/y/z']) {
    const res = await app.inject({ url })
    assert.equal(res.statusCode, 404, url)
    assert.deepEqual(res.json(), { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }, url)
  }
})

test('without a build, the app\'s pages say how to build it (503), not a JSON 404', async (t) => {
  const app = await serve(t, {})
  const res = await app.inject({ url: '/activity' })
  assert.equal(res.statusCode, 503)
  assert.match(res.body, /npm run build/)
  assert.equal((await app.inject({ url: '/api/x/' })).statusCode, 404)
})

test('in the whole server, the API and capture routes are untouched by the web app', async (t) => {
  const app = await buildTestApp(t)
  const me = await app.http.inject({ url: '/api/users/@me/', headers: app.auth })
  assert.equal(me.statusCode, 200)
  assert.match(String(me.headers['content-type']), /json/)
  const unknown = await app.http.inject({ url: `/api/projects/${app.projectId}/no_such_thing/`, headers: app.auth })
  assert.equal(unknown.statusCode, 404)
  assert.equal(unknown.json().code, 'not_found')
  const capture = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: app.projectKey, event: 'x', properties: { distinct_id: 'd' } } })
  assert.equal(capture.statusCode, 200)
  assert.equal((await app.http.inject({ url: '/_health' })).statusCode, 200)
})

test('/api/schema/ describes every API route (OpenAPI), without a key', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ url: '/api/schema/' })
  assert.equal(res.statusCode, 200)
  const schema = res.json() as { openapi: string; paths: Record<string, Record<string, { tags: string[]; parameters: { name: string }[]; security: unknown[] }>> }
  assert.equal(schema.openapi, '3.1.0')
  const flags = schema.paths['/api/projects/{project_id}/feature_flags/']
  assert.deepEqual(Object.keys(flags).sort(), ['get', 'post'])
  assert.deepEqual(flags.get.tags, ['feature_flags'])
  assert.deepEqual(flags.get.parameters.map((p) => p.name), ['project_id'])
  assert.ok(flags.get.security.length > 0, 'private routes name their authentication')
  assert.deepEqual(schema.paths['/api/login/'].post.security, [], 'sign-in needs none')
  assert.ok(schema.paths['/api/projects/{project_id}/query/'].post)
  assert.ok(schema.paths['/decide/'].post)
  assert.ok(!Object.keys(schema.paths).some((p) => p.startsWith('/activity') || p.startsWith('/assets')), 'the web app\'s pages are not API')
})
