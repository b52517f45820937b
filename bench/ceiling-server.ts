// The ceilings for bench/ingest.ts: a bare Fastify route answering {status: 1}, nothing else, and
// the parse-only route: the same after gunzip (when sent gzipped) and JSON.parse of the body.
import { gunzipSync } from 'node:zlib'
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
app.post('/e/', async () => ({ status: 1 }))
app.post('/batch/', async () => ({ status: 1 }))
app.post('/parse/', async (req) => {
  const raw = req.body as Buffer
  const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')
  const body = JSON.parse(text) as { batch?: unknown[] }
  return { status: 1, n: body.batch?.length ?? 1 }
})
const address = await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(`ceiling ready on ${address}\n`)
