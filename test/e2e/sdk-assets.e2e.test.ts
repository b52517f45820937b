import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { test } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { buildTestApp } from '../helpers/test-app.ts'

const manifest = createRequire(import.meta.url).resolve('posthog-js/package.json')
const dist = path.join(path.dirname(manifest), 'dist')
const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version

test('/static/ serves posthog-js extensions, unversioned and versioned, with CORS and cache headers', async (t) => {
  const app = await buildTestApp(t)
  for (const name of ['surveys.js', 'recorder.js', 'array.js', 'dead-clicks-autocapture.js']) {
    const res = await app.http.inject({ url: `/static/${name}?v=${version}`, headers: { origin: 'https://shop.example' } })
    assert.equal(res.statusCode, 200, name)
    assert.equal(res.headers['access-control-allow-origin'], '*')
    assert.match(String(res.headers['content-type']), /^application\/javascript/)
    assert.equal(res.headers['cache-control'], 'public, max-age=3600')
    assert.equal(res.body, readFileSync(path.join(dist, name), 'utf8'), name)
  }
  const versioned = await app.http.inject({ url: `/static/${version}/surveys.js` })
  assert.equal(versioned.statusCode, 200)
  assert.equal(versioned.headers['cache-control'], 'public, max-age=31536000, immutable')
  assert.equal(versioned.headers['x-posthog-js-version'], version)
})

test('/static/ answers 404 with CORS headers for anything that is not a posthog-js script', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/static/nope.js', '/static/..%2Fpackage.json', '/static/%2e%2e/package.json', '/static/surveys.d.ts', '/static/1.0.0/..%2F..%2Fpackage.json']) {
    const res = await app.http.inject({ url })
    assert.equal(res.statusCode, 404, url)
    assert.equal(res.json().code, 'not_found', url)
  }
  assert.equal((await app.http.inject({ url: '/static/nope.js' })).headers['access-control-allow-origin'], '*')
})

test('/static/ sends the scripts brotli- or gzip-compressed as the client accepts, with Vary and cache headers', async (t) => {
  const app = await buildTestApp(t)
  const plain = readFileSync(path.join(dist, 'array.js'))
  const get = (acceptEncoding?: string) =>
    app.http.inject({ url: `/static/array.js?v=${version}`, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } })
  const br = await get('gzip, deflate, br, zstd')
  assert.equal(br.statusCode, 200)
  assert.equal(br.headers['content-encoding'], 'br')
  assert.equal(br.headers.vary, 'Accept-Encoding')
  assert.equal(br.headers['cache-control'], 'public, max-age=3600')
  assert.ok(br.rawPayload.length < plain.length * 0.35, `brotli body ${br.rawPayload.length} B of ${plain.length} B`)
  assert.ok(brotliDecompressSync(br.rawPayload).equals(plain))
  for (const accept of ['gzip', 'br;q=0, gzip;q=0.8']) {
    const gz = await get(accept)
    assert.equal(gz.headers['content-encoding'], 'gzip', accept)
    assert.ok(gunzipSync(gz.rawPayload).equals(plain), accept)
  }
  for (const accept of [undefined, 'identity', 'br;q=0, gzip;q=0']) {
    const raw = await get(accept)
    assert.equal(raw.headers['content-encoding'], undefined, String(accept))
    assert.ok(raw.rawPayload.equals(plain), String(accept))
  }
  const versioned = await app.http.inject({ url: `/static/${version}/array.js`, headers: { 'accept-encoding': 'br' } })
  assert.equal(versioned.headers['content-encoding'], 'br')
  assert.equal(versioned.headers['cache-control'], 'public, max-age=31536000, immutable')
})

test('/static/toolbar.js answers a script that says the toolbar is not offered, with CORS', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ url: `/static/toolbar.js?v=${version}&t=1700000000000`, headers: { origin: 'https://shop.example' } })
  assert.equal(res.statusCode, 200)
  assert.match(String(res.headers['content-type']), /^application\/javascript/)
  assert.equal(res.headers['access-control-allow-origin'], '*')
  assert.match(res.body, /window\.ph_load_toolbar=function/)
  assert.match(res.body, /not available/)
})
