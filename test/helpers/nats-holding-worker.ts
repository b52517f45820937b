// A worker process that takes a batch from the JetStream queue and never finishes it: the crash
// tests SIGKILL it while it holds the batch. Usage: nats-holding-worker.ts <servers> <stream> <ackWaitMs>
import { openNatsEventQueue } from '../../src/queue/nats-event-queue.ts'

const [servers, stream, ackWaitMs] = process.argv.slice(2)
const queue = await openNatsEventQueue({ servers: servers!.split(','), stream: stream!, ackWaitMs: Number(ackWaitMs) })
queue.consume(
  async (messages) => {
    process.stdout.write(`holding ${messages.length}\n`)
    await new Promise(() => {})
  },
  { maxBatch: 1000, maxWaitMs: 1 },
)
