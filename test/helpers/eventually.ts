/** Polls `fn` until it returns a truthy value (or throws after `tries` × `ms`). No time is asserted. */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, tries = 100, ms = 100): Promise<T> {
  let last: unknown
  for (let i = 0; i < tries; i++) {
    try {
      const v = await fn()
      if (v) return v
    } catch (err) {
      last = err
    }
    await new Promise((r) => setTimeout(r, ms))
  }
  throw new Error(`condition not met${last ? `: ${String(last)}` : ''}`)
}
