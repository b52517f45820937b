import { existsSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import type { TestContext } from 'node:test'
import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium; the browser suites skip where it is missing (CI installs it). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)

/**
 * Headless Chromium with the flags this closed network needs (plus `extraArgs`, e.g.
 * `--disable-blink-features=AutomationControlled` where posthog-js must not see a bot); closed when the test ends.
 */
export async function launchBrowser(t: TestContext, extraArgs: string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', ...extraArgs],
  })
  t.after(() => browser.close())
  return browser
}

/**
 * Serves one HTML page at `/` and posthog-js's browser bundle at `/posthog.js` on a loopback port,
 * so the page's origin differs from Tally's (real CORS). `bundle` names another installed bundle
 * (e.g. an older posthog-js under an npm alias).
 */
export async function servePage(t: TestContext, html: string, bundlePath = 'posthog-js/dist/array.full.js'): Promise<string> {
  const require = createRequire(import.meta.url)
  const bundle = readFileSync(require.resolve(bundlePath))
  const server = http.createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' }).end(bundle)
    } else if (req.url === '/favicon.ico') {
      res.writeHead(204).end() // so the only 404s a page sees are Tally's
    } else if (req.url === '/' || req.url?.startsWith('/?')) {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html)
    } else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
