import { readdirSync } from 'node:fs'
import os from 'node:os'

/**
 * Lowers the scheduling priority (raises the nice value) of DuckDB's own threads, so that a query
 * computing on them yields a core to the event loop (capture, /decide, readiness) as soon as the
 * event loop has work. Issue 29: beside four heavy queries, /decide's requests waited for a core
 * behind DuckDB's threads, not for the event loop (its CPU per request did not change).
 *
 * Linux gives every thread its own nice value, `setpriority(PRIO_PROCESS, tid)` (Node's
 * `os.setPriority`) sets one thread's, and raising it needs no privilege. DuckDB's threads carry no
 * name of their own, so they are found as the threads that appear while DuckDB starts them: the
 * task list of the process is read just before and just after the statement that creates them
 * (opening the instance, `SET threads`). Anything else that started a thread in that window would be
 * lowered too; nothing in Tally does (libuv's pool is started before, see `startLibuvPool`).
 * Elsewhere than Linux, or with `nice` 0, this does nothing.
 */
export function createDuckDbThreadPriority(nice: number) {
  const enabled = nice > 0 && process.platform === 'linux'
  const lowered = new Set<number>()
  const tasks = (): number[] => {
    try {
      return readdirSync('/proc/self/task').map(Number)
    } catch {
      return []
    }
  }
  return {
    /** Runs `start` (a statement that may create DuckDB threads) and lowers the threads it created. */
    async around<T>(start: () => Promise<T>): Promise<T> {
      if (!enabled) return start()
      const before = new Set(tasks())
      const result = await start()
      for (const tid of tasks()) {
        if (before.has(tid) || lowered.has(tid) || tid === process.pid) continue
        try {
          os.setPriority(tid, nice)
          lowered.add(tid)
        } catch {
          // The thread ended meanwhile, or the system refuses: it keeps its priority.
        }
      }
      return result
    },
    /** Thread ids lowered so far (some may have ended since). */
    lowered: (): ReadonlySet<number> => lowered,
  }
}

export type DuckDbThreadPriority = ReturnType<typeof createDuckDbThreadPriority>
