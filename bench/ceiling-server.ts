// The ceiling for bench/ingest.ts: a bare Fastify route answering {status: 1}, nothing else.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
app.post('/e/', async () => ({ status: 1 }))
app.post('/batch/', async () => ({ status: 1 }))
const address = await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(`ceiling ready on ${address}\n`)
