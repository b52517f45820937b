/**
 * The uuids of the events stored most recently, as a filter: `mayHave` is true for every uuid added
 * within the window and, rarely, for another one (a 32-bit fingerprint collision: about one lookup
 * in a billion), so a hit must be confirmed in the store. Two generations of `perGeneration` uuids
 * each: when the current one is full it becomes the previous one and the oldest is cleared, so the
 * window holds between `perGeneration` and twice that many of the latest uuids. Each generation is
 * an open-addressing table of 32-bit fingerprints at most half full, allocated at creation outside
 * the V8 heap: a million per generation take 2^21 slots of 4 bytes, 16.8 MB for both.
 *
 * It also keeps the earliest `createdAt` of what it holds, so a confirmation can skip the older
 * part of the table.
 */
export interface RecentUuids {
  mayHave(uuid: string): boolean
  add(uuid: string, createdAtMs: number): void
  /** The earliest `createdAt` among the uuids held (Infinity when empty). */
  earliestMs(): number
  readonly size: number
}

export function recentUuids(perGeneration: number): RecentUuids {
  if (!Number.isInteger(perGeneration) || perGeneration < 1) throw new RangeError('perGeneration must be a positive integer')
  const slots = 2 ** Math.ceil(Math.log2(perGeneration * 2))
  const mask = slots - 1
  let current = generation(slots)
  let previous = generation(slots)

  function find(g: Generation, index: number, fp: number): boolean {
    for (let i = index; ; i = (i + 1) & mask) {
      const v = g.table[i]!
      if (v === 0) return false
      if (v === fp) return true
    }
  }

  return {
    mayHave(uuid) {
      const h = hashes(uuid)
      return find(current, h.index & mask, h.fp) || (previous.count > 0 && find(previous, h.index & mask, h.fp))
    },
    add(uuid, createdAtMs) {
      if (current.count >= perGeneration) {
        const emptied = previous
        emptied.table.fill(0)
        emptied.count = 0
        emptied.earliestMs = Infinity
        previous = current
        current = emptied
      }
      const h = hashes(uuid)
      let i = h.index & mask
      for (;;) {
        const v = current.table[i]!
        if (v === h.fp) break
        if (v === 0) {
          current.table[i] = h.fp
          break
        }
        i = (i + 1) & mask
      }
      current.count++
      if (createdAtMs < current.earliestMs) current.earliestMs = createdAtMs
    },
    earliestMs: () => Math.min(current.earliestMs, previous.count > 0 ? previous.earliestMs : Infinity),
    get size() {
      return current.count + previous.count
    },
  }
}

interface Generation {
  table: Uint32Array
  count: number
  earliestMs: number
}

function generation(slots: number): Generation {
  return { table: new Uint32Array(slots), count: 0, earliestMs: Infinity }
}

const scratch = { index: 0, fp: 0 }

/**
 * Two independent 32-bit hashes of the text (FNV-1a with two offsets, each finished with murmur3's
 * mixer): one picks the slot, the other is the fingerprint stored (never 0, which marks a free slot).
 * Returns a shared object: read it before the next call.
 */
function hashes(s: string): { index: number; fp: number } {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x9e3779b9
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15)
  }
  scratch.index = mix(a) >>> 0
  scratch.fp = (mix(b) >>> 0) || 1
  return scratch
}

function mix(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}
