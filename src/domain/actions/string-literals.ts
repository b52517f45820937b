/**
 * A text that every string matched by a step's url (or text, href) comparison must contain, so a
 * store can discard most rows with a substring test before it parses anything. Necessary, never
 * sufficient; `undefined` means "no cheap test" (always safe). Reads the comparison as
 * `planStringMatch` does: `exact` the whole value, `contains` SQL LIKE (`%` and `_` wildcards, no
 * escape), `regex` an RE2 pattern searched unanchored.
 */
export function requiredMatchLiteral(value: string, matching: string | null | undefined, fallback: 'exact' | 'contains'): string | undefined {
  const mode = matching ?? fallback
  let pieces: string[] = []
  if (mode === 'exact') pieces = [value]
  else if (mode === 'contains') pieces = value.split(/[%_]/)
  else if (mode === 'regex') pieces = regexLiteralRuns(value) ?? []
  const best = pieces.reduce((a, b) => (b.length > a.length ? b : a), '')
  return best === '' ? undefined : best
}

const QUANTIFIER = /^\{(\d+)(?:,(\d*))?\}/

/**
 * The runs of literal characters an RE2 pattern requires in sequence at its top level, or null when
 * the pattern is beyond this reading (any top-level `|`, a case-insensitive flag, `\Q`, `\p`, `\x`,
 * nested classes). Groups and classes are skipped whole (they end a run); a character made optional
 * or repeated by `*`, `?`, `{n,m}` leaves its run, `+` keeps it and ends the run.
 */
export function regexLiteralRuns(source: string): string[] | null {
  if (/\(\?[a-zA-Z-]*i/.test(source) || /\\[QEpPx]/.test(source)) return null
  const chars = Array.from(source) // code points: an astral character is one atom
  const runs: string[] = []
  let run: string[] = []
  const endRun = () => {
    if (run.length > 0) runs.push(run.join(''))
    run = []
  }
  let i = 0
  while (i < chars.length) {
    const c = chars[i]!
    if (c === '|') return null
    if (c === '(') {
      const end = skipGroup(chars, i)
      if (end < 0) return null
      endRun()
      i = end
    } else if (c === '[') {
      const end = skipClass(chars, i)
      if (end < 0) return null
      endRun()
      i = end
    } else if (c === '\\') {
      const next = chars[i + 1]
      if (next === undefined || /[0-9]/.test(next)) return null
      if (/[A-Za-z]/.test(next)) {
        endRun() // \d, \w, \b, \n, \A...: a class or an assertion, not this character
        i += 2
      } else {
        run.push(next)
        i += 2
      }
    } else if (c === '*' || c === '?' || c === '{') {
      let len = 1
      if (c === '{') {
        const m = QUANTIFIER.exec(chars.slice(i, i + 24).join(''))
        if (!m) return null
        len = Array.from(m[0]).length
      }
      run.pop() // the previous atom may be absent or repeated: it leaves the run
      endRun()
      i += len
      if (chars[i] === '?') i++ // non-greedy
    } else if (c === '+') {
      endRun()
      i++
      if (chars[i] === '?') i++
    } else if (c === '.' || c === '^' || c === '$') {
      endRun()
      i++
    } else {
      run.push(c)
      i++
    }
  }
  endRun()
  return runs
}

/** Index after the `)` closing the group opened at `start`, or -1 when it cannot be read. */
function skipGroup(chars: string[], start: number): number {
  let depth = 0
  let i = start
  while (i < chars.length) {
    const c = chars[i]!
    if (c === '\\') i += 2
    else if (c === '[') {
      i = skipClass(chars, i)
      if (i < 0) return -1
    } else {
      if (c === '(') depth++
      else if (c === ')' && --depth === 0) return i + 1
      i++
    }
  }
  return -1
}

/** Index after the `]` closing the class opened at `start`, or -1 (nested `[` is refused). */
function skipClass(chars: string[], start: number): number {
  let i = start + 1
  if (chars[i] === '^') i++
  if (chars[i] === ']') i++ // a leading `]` is a member
  while (i < chars.length) {
    const c = chars[i]!
    if (c === '\\') i += 2
    else if (c === '[') return -1
    else if (c === ']') return i + 1
    else i++
  }
  return -1
}
