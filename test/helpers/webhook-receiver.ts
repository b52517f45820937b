import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export interface ReceivedRequest {
  path: string
  headers: http.IncomingHttpHeaders
  body: string
  at: number
}

type Answer = number | { status: number; location: string } | 'hang'

export interface WebhookReceiver {
  url: (path?: string) => string
  port: number
  requests: ReceivedRequest[]
  /** TCP connections opened to it so far. */
  connections: () => number
  /** The most requests it held unanswered at once. */
  maxInFlight: () => number
}

/**
 * An HTTP server on loopback that records every request and answers with `answer(request, n)`
 * (n: requests so far on that path, from 1): a status, or `{status, location}` for a redirect, or
 * 'hang' to never answer, or a promise of one of those (answered once it settles). Closed when the
 * test ends.
 */
export async function startWebhookReceiver(
  t: TestContext,
  answer: (req: ReceivedRequest, n: number) => Answer | Promise<Answer> = () => 200,
  host = '127.0.0.1',
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = []
  const counts = new Map<string, number>()
  let connections = 0
  let inFlight = 0
  let maxInFlight = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const r = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      requests.push(r)
      const n = (counts.get(r.path) ?? 0) + 1
      counts.set(r.path, n)
      maxInFlight = Math.max(maxInFlight, ++inFlight)
      const a = await answer(r, n)
      if (a === 'hang') return
      inFlight--
      if (typeof a === 'number') res.writeHead(a).end()
      else res.writeHead(a.status, { location: a.location }).end()
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  const port = (server.address() as AddressInfo).port
  return { port, url: (path = '/hook') => `http://${host}:${port}${path}`, requests, connections: () => connections, maxInFlight: () => maxInFlight }
}
