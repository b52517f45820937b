// The webhook ceiling for bench/ingest.ts (BENCH_NOTIFY=1): Tally's own webhook client, alone in a
// process, POSTing as many destination messages as the notify phase delivered to the same receivers,
// with the same shape of body and headers and as many requests in flight as the server's sender (16
// per destination, 2 destinations). No ingestion, outbox or planning: what one delivery costs at the
// least with this client. Prints its CPU per message (all threads, after a warm-up).
//   node bench/webhook-ceiling.ts <url1,url2> <messages> <in flight>
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [urls, count, inFlight] = [process.argv[2]!.split(','), Number(process.argv[3]), Number(process.argv[4])]
// The built client (the bench measures dist/, as the server it runs).
const mod = (await import(pathToFileURL(path.resolve('dist/modules/notifications/webhook-client.js')).href)) as typeof import('../src/modules/notifications/webhook-client.ts')
const client = mod.createWebhookClient({ allow: ['127.0.0.1'], timeoutMs: 10_000, connectionsPerOrigin: inFlight / urls.length })

async function send(n: number, keyPrefix: string) {
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < n; i = next++) {
        const res = await client.post(urls[i % urls.length]!, JSON.stringify({ ts: new Date().toISOString() }), { 'idempotency-key': `${keyPrefix}:${i}` })
        if (res.status !== 200) throw new Error(`receiver answered ${res.status}`)
      }
    }),
  )
}

await send(1000, 'warm-up')
const cpu0 = process.cpuUsage()
await send(count, 'ceiling')
const cpu = process.cpuUsage(cpu0)
await client.close()
process.stdout.write(`${JSON.stringify({ messages: count, cpuUsPerMessage: (cpu.user + cpu.system) / count })}\n`)
