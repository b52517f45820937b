/** A background pass run again and again, one at a time: see {@link startPeriodicPass}. */
export interface PeriodicPass {
  /** True once `stop` was called: a pass checks it between its steps. */
  readonly stopped: boolean
  /** No pass starts after it; resolves when the running one (if any) has ended. */
  stop(): Promise<void>
}

/**
 * Runs `pass` after `firstDelayMs`, then `everyMs` after each pass ends (never two at once). A pass
 * that fails is reported to `onError` and tried again at the next turn. The timers do not keep the
 * process alive.
 */
export function startPeriodicPass(opts: {
  pass: (job: PeriodicPass) => Promise<void>
  everyMs: number
  firstDelayMs: number
  onError: (err: unknown) => void
}): PeriodicPass {
  let stopped = false
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> = Promise.resolve()
  const job: PeriodicPass = {
    get stopped() {
      return stopped
    },
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
  const tick = () => {
    running = opts
      .pass(job)
      .catch(opts.onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, opts.everyMs).unref()
      })
  }
  timer = setTimeout(tick, opts.firstDelayMs).unref()
  return job
}
