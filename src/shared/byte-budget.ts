/**
 * A bound on bytes held at once (request bodies being read and decoded): `acquire(n)` waits, in
 * arrival order, until `n` more bytes fit under the limit. One claim larger than the whole limit
 * is let through when nothing else is held, so no single request can wait forever.
 */
export class ByteBudget {
  private held = 0
  private readonly waiting: { bytes: number; resolve: () => void }[] = []

  constructor(readonly limit: number) {}

  /** Resolves once `bytes` are granted; the caller must `release(bytes)` exactly once afterwards. */
  acquire(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.held += bytes
      return Promise.resolve()
    }
    return new Promise((resolve) => this.waiting.push({ bytes, resolve }))
  }

  release(bytes: number): void {
    this.held -= bytes
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!
      this.held += next.bytes
      next.resolve()
    }
  }

  /** Bytes granted now, and claims waiting (metrics, tests). */
  state(): { held: number; waiting: number } {
    return { held: this.held, waiting: this.waiting.length }
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.limit
  }
}
