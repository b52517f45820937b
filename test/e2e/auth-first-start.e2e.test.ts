import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { tallyArgs } from '../helpers/tally-command.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const ENV = { ...process.env, TALLY_LOG_LEVEL: 'info', TALLY_PERSON_CACHE_WARM: 'false' }

/** `tally serve --port 0` on `dataDir`; resolves with everything it printed once `until` matches. */
function serveUntil(dataDir: string, until: RegExp) {
  const child = spawn(process.execPath, tallyArgs('serve', '--port', '0', '--data-dir', dataDir), { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const printed = new Promise<string>((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (until.test(output)) resolve(output)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then(() => reject(new Error(`server exited:\n${output}`)))
  })
  return { printed, stop: async () => { child.kill('SIGTERM'); await exited } }
}

function cookiesOf(res: Response): string {
  return res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
}

test('first start prints a one-time set-up link on the bound port; the owner sets e-mail and password there and signs in', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-first-start-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const server = serveUntil(dataDir, /set up the owner's sign-in.*token=\S+/)
  t.after(server.stop)
  const output = await server.printed
  assert.match(output, /personal API key: phx_/)
  const link = new URL(/(http:\/\/\S+\/setup\?token=\S+)/.exec(output)![1]!)
  const ready = /Tally ready on (http:\/\/\S+)/.exec(output)![1]!
  assert.equal(link.port, new URL(ready).port, 'the link names the port actually bound')
  const token = link.searchParams.get('token')!
  const base = link.origin

  assert.deepEqual(await (await fetch(`${base}/api/setup/?token=${token}`)).json(), { valid: true })
  const setup = await fetch(`${base}/api/setup/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ token, email: 'me@example.com', password: 'my own password', first_name: 'Me' }),
  })
  assert.equal(setup.status, 200, await setup.clone().text())
  const me = await fetch(`${base}/api/users/@me/`, { headers: { cookie: cookiesOf(setup) } })
  assert.equal((await me.json()).email, 'me@example.com')
  assert.deepEqual(await (await fetch(`${base}/api/setup/?token=${token}`)).json(), { valid: false }, 'single use')
  const login = await fetch(`${base}/api/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'me@example.com', password: 'my own password' }),
  })
  assert.equal(login.status, 200)
  await server.stop()

  // The second start prints no new link; `tally users create` adds an admin who can sign in.
  const cli = spawnSync(process.execPath, tallyArgs('users', 'create', '--email', 'Ada@Example.com', '--password', 'admin password', '--role', 'admin', '--data-dir', dataDir), { cwd: ROOT, env: ENV, encoding: 'utf8' })
  assert.equal(cli.status, 0, cli.stderr)
  assert.match(cli.stdout, /user ada@example.com created \(admin\)/)
  const noPassword = spawnSync(process.execPath, tallyArgs('users', 'create', '--email', 'max@example.com', '--data-dir', dataDir), { cwd: ROOT, env: ENV, encoding: 'utf8' })
  assert.equal(noPassword.status, 0, noPassword.stderr)
  const maxToken = /setup\?token=(\S+)/.exec(noPassword.stdout)?.[1]
  assert.ok(maxToken, noPassword.stdout)
  const bad = spawnSync(process.execPath, tallyArgs('users', 'create', '--email', 'x@example.com', '--role', 'root', '--data-dir', dataDir), { cwd: ROOT, env: ENV, encoding: 'utf8' })
  assert.equal(bad.status, 2)

  const again = serveUntil(dataDir, /Tally ready on http:\/\/\S+/)
  t.after(again.stop)
  const second = await again.printed
  assert.doesNotMatch(second, /setup\?token=/)
  const base2 = /Tally ready on (http:\/\/\S+)/.exec(second)![1]!
  const adminLogin = await fetch(`${base2}/api/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ada@example.com', password: 'admin password' }),
  })
  assert.equal(adminLogin.status, 200)
  const adminMe = await (await fetch(`${base2}/api/users/@me/`, { headers: { cookie: cookiesOf(adminLogin) } })).json()
  assert.equal(adminMe.organization.membership_level, 8)
  assert.deepEqual(await (await fetch(`${base2}/api/setup/?token=${maxToken}`)).json(), { valid: true })
})
