import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { CHROMIUM, hasChromium, launchBrowser } from '../helpers/browser.ts'
import { axeViolations, screenshot, startWebTally } from '../helpers/web-app.ts'

assert.ok(hasChromium, `Chromium is needed at ${CHROMIUM} (apt-get install chromium)`)

const PASSWORD = 'correct horse battery'

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
}

async function openSettingsTab(page: Page, tab: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click()
  await page.getByRole('tab', { name: tab }).click()
}

/** A same-origin request from the page, as its scripts make them (session cookie + CSRF header). */
async function fetchFromPage(page: Page, method: string, path: string): Promise<number> {
  return page.evaluate(async ([m, p]) => {
    const csrf = document.cookie.split('; ').find((c) => c.startsWith('tally_csrftoken='))?.split('=')[1] ?? ''
    return (await fetch(p, { method: m, headers: { 'x-csrftoken': csrf } })).status
  }, [method, path] as const)
}

test('web app accounts: set-up link, sign in with a password, invite a member who signs up; a member cannot manage others\' keys or members', async (t) => {
  const { app, url } = await startWebTally(t)
  const browser = await launchBrowser(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  page.setDefaultTimeout(60_000)

  await t.test('the owner chooses an e-mail and password through the set-up link', async () => {
    const token = await app.services.auth.createSetupToken()
    await page.goto(`${url}/setup?token=${token}`)
    await page.getByRole('heading', { name: 'Set up Tally' }).waitFor()
    assert.deepEqual(await axeViolations(page), [])
    await screenshot(page, 'set-up')
    await page.getByLabel('Your first name').fill('Olive')
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create owner account' }).click()
    await page.getByRole('heading', { level: 1, name: /^(Activity|Web analytics)$/ }).waitFor() // the landing page: Web analytics once there are page views
    const session = (await context.cookies()).find((c) => c.name === 'tally_session')
    assert.ok(session?.httpOnly, 'the session cookie is HttpOnly')
    assert.equal(session.sameSite, 'Lax')
  })

  await t.test('sign out, then sign in with e-mail and password', async () => {
    await signOut(page)
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByLabel('Password').fill('wrong password!')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('alert').waitFor()
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: /^(Activity|Web analytics)$/ }).waitFor() // the landing page: Web analytics once there are page views
    assert.equal(await page.locator('.topbar .user').innerText(), 'Olive')
  })

  let inviteLink = ''
  await t.test('the owner invites a member and gets a one-time link', async () => {
    await openSettingsTab(page, 'Members')
    await page.getByRole('table', { name: 'Members' }).getByText('owner@example.com').waitFor()
    await page.getByLabel('Email').fill('mia@example.com')
    await page.getByLabel('Role').selectOption({ label: 'Member' })
    await page.getByRole('button', { name: 'Create invite link' }).click()
    inviteLink = await page.getByTestId('invite-link').innerText()
    assert.match(inviteLink, new RegExp(`^${url}/signup\\?invite=`))
    await page.getByRole('table', { name: 'Invitations' }).getByText('mia@example.com').waitFor()
    assert.deepEqual(await axeViolations(page), [])
    await screenshot(page, 'settings-members')
    await signOut(page)
  })

  await t.test('the invited member signs up through the link and is signed in', async () => {
    await page.goto(inviteLink)
    await page.getByText('mia@example.com').waitFor()
    assert.deepEqual(await axeViolations(page), [])
    await page.getByLabel('Your first name').fill('Mia')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('heading', { level: 1, name: /^(Activity|Web analytics)$/ }).waitFor() // the landing page: Web analytics once there are page views
    assert.equal(await page.locator('.topbar .user').innerText(), 'Mia')
    await signOut(page)
    await page.getByLabel('Email').fill('mia@example.com')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: /^(Activity|Web analytics)$/ }).waitFor() // the landing page: Web analytics once there are page views
    assert.equal(await page.locator('.topbar .user').innerText(), 'Mia')
  })

  await t.test('a member cannot revoke someone else\'s key, reset the project key, or manage members', async () => {
    await openSettingsTab(page, 'Project')
    await page.getByTestId('project-api-key').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Reset key' }).count(), 0)
    // The project answers with her own level (member), so the settings only an admin may change are locked.
    assert.equal(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled(), true)
    await page.getByText('Only admins and owners change project settings.').waitFor()
    assert.equal(await fetchFromPage(page, 'PATCH', `/api/projects/${app.projectId}/reset_token/`), 403)

    const ownerKeys = await app.http.inject({ url: '/api/personal_api_keys/', headers: app.auth })
    const ownerKeyId = (ownerKeys.json() as Array<{ id: number }>)[0].id
    assert.equal(await fetchFromPage(page, 'DELETE', `/api/personal_api_keys/${ownerKeyId}/`), 404)
    assert.equal((await app.http.inject({ url: '/api/projects/', headers: app.auth })).statusCode, 200, 'the owner\'s key still works')

    await openSettingsTab(page, 'Personal API keys')
    await page.getByLabel('Label').fill('Mia laptop')
    await page.getByRole('button', { name: 'Create key' }).click()
    assert.match(await page.getByTestId('new-key').innerText(), /^phx_/)
    await page.getByRole('table', { name: 'Personal API keys' }).getByText('Mia laptop').waitFor()
    assert.equal(await page.getByRole('table', { name: 'Personal API keys' }).getByRole('row').count(), 2, 'only her own key is listed')
    const newKey = await page.getByTestId('new-key').innerText()
    assert.equal((await app.http.inject({ url: '/api/projects/', headers: { authorization: `Bearer ${newKey.trim()}` } })).statusCode, 200, 'the new key works')
    await page.getByRole('button', { name: 'Revoke Mia laptop' }).click()
    await page.getByText('No personal API keys.').waitFor()
    assert.equal((await app.http.inject({ url: '/api/projects/', headers: { authorization: `Bearer ${newKey.trim()}` } })).statusCode, 401, 'her own key, revoked')

    await page.getByRole('tab', { name: 'Members' }).click()
    await page.getByRole('table', { name: 'Members' }).getByText('owner@example.com').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Create invite link' }).count(), 0)
    assert.equal(await page.getByRole('button', { name: 'Remove' }).count(), 0)
  })

  await t.test('when the session ends, the next request leads back to the sign-in page', async () => {
    await context.clearCookies()
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Feature flags' }).click()
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    assert.match(page.url(), /\/login\?next=%2Ffeature_flags/)
  })
})
