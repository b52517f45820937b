import type { ClickHouseClient } from '@clickhouse/client'
import { clickHouseCode } from './clickhouse-errors.ts'

/**
 * The servers of TALLY_CLICKHOUSE_URL (one, or the replicas of a cluster), each with its client.
 * A request goes to the replica that answered last; when that one cannot be reached (refused,
 * reset, timed out) or cannot serve (read-only: it lost ZooKeeper), the same request goes to the
 * next one, and that one becomes the first choice. Nothing goes back until it fails in turn.
 *
 * Sending a failed request again elsewhere is safe for everything Tally sends: SELECTs; inserts (an
 * insert cut off after the replica stored it is the same block again, which a Replicated table drops
 * by its hash, and the event store confirms uuids before it inserts: docs/clickhouse.md); DDL (`IF
 * NOT EXISTS`, a column that exists is success); mutations and DROP PARTITION (idempotent).
 */
export interface ClickHouseReplicas {
  /** Runs `op` on the preferred replica, then on each other one while the failure says "unreachable". */
  run<T>(op: (client: ClickHouseClient) => Promise<T>, signal?: AbortSignal): Promise<T>
  /** Every replica's client, the order of TALLY_CLICKHOUSE_URL. */
  readonly clients: readonly ClickHouseClient[]
  close(): Promise<void>
}

/** ClickHouse's codes of a server that cannot serve now though another replica may. */
const REPLICA_UNAVAILABLE = new Set([
  '164', // READONLY: a replicated table without its ZooKeeper session
  '209', // SOCKET_TIMEOUT
  '210', // NETWORK_ERROR
  '225', // NO_ZOOKEEPER
  '242', // TABLE_IS_READ_ONLY
])

/** A server that did not answer at all (the request was not, or not wholly, handled). */
const UNREACHABLE = /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|socket hang up|other side closed|Timeout error/i

export function replicaUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  return REPLICA_UNAVAILABLE.has(clickHouseCode(err)) || UNREACHABLE.test(err.message) || (typeof code === 'string' && UNREACHABLE.test(code))
}

export function clickHouseReplicas(clients: ClickHouseClient[]): ClickHouseReplicas {
  let preferred = 0
  return {
    clients,
    async run(op, signal) {
      let failure: unknown
      for (let i = 0; i < clients.length; i++) {
        const at = (preferred + i) % clients.length
        try {
          const result = await op(clients[at]!)
          preferred = at
          return result
        } catch (err) {
          if (signal?.aborted || !replicaUnavailable(err)) throw err
          failure = err
        }
      }
      throw failure
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()))
    },
  }
}
