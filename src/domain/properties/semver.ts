/**
 * Semantic versions as PostHog's Rust flags service reads them
 * (rust/feature-flags/src/properties/property_matching.rs, `to_semver_representation`): a
 * leading `v` is stripped, missing minor/patch are padded with 0, leading zeros of numeric
 * components are dropped, then the `semver` crate's strict grammar applies.
 */
export interface SemVer {
  major: number
  minor: number
  patch: number
  pre: readonly (string | number)[]
  build: readonly (string | number)[]
}

/** A half-open range `[lower, upper)`; `upper` null means unbounded. */
export interface SemverRange {
  lower: SemVer
  upper: SemVer | null
}

const IDENT = /^[0-9A-Za-z-]+$/
const DIGITS = /^\d+$/

function stripLeadingZeros(part: string): string {
  if (part === '' || !DIGITS.test(part)) return part
  const trimmed = part.replace(/^0+/, '')
  return trimmed === '' ? '0' : trimmed
}

function normalize(text: string): string {
  return (text.startsWith('v') ? text.slice(1) : text).trim()
}

function parseIdentifiers(text: string, isPre: boolean): (string | number)[] | null {
  const out: (string | number)[] = []
  for (const id of text.split('.')) {
    if (!IDENT.test(id)) return null
    if (DIGITS.test(id)) {
      if (isPre && id.length > 1 && id[0] === '0') return null
      out.push(isPre ? Number(id) : id)
    } else {
      out.push(id)
    }
  }
  return out
}

function parseCore(parts: string[]): [number, number, number] | null {
  if (parts.length !== 3 || !parts.every((p) => DIGITS.test(p))) return null
  const nums = parts.map(Number) as [number, number, number]
  return nums.every(Number.isSafeInteger) ? nums : null
}

/** Parses a version string; null when the Rust service would fail to parse it. */
export function parseSemver(text: string): SemVer | null {
  const version = normalize(text)
  const cut = version.search(/[-+]/)
  const core = cut === -1 ? version : version.slice(0, cut)
  const suffix = cut === -1 ? '' : version.slice(cut)
  const parts = core.split('.').map(stripLeadingZeros)
  while (parts.length < 3) parts.push('0')
  const nums = parseCore(parts)
  if (nums === null) return null
  let pre: (string | number)[] = []
  let build: (string | number)[] = []
  const plus = suffix.indexOf('+')
  const preText = suffix.startsWith('-') ? suffix.slice(1, plus === -1 ? undefined : plus) : ''
  if (suffix.startsWith('-')) {
    const parsed = parseIdentifiers(preText, true)
    if (parsed === null) return null
    pre = parsed
  }
  if (plus !== -1) {
    const parsed = parseIdentifiers(suffix.slice(plus + 1), false)
    if (parsed === null) return null
    build = parsed
  }
  return { major: nums[0], minor: nums[1], patch: nums[2], pre, build }
}

function compareIdentifiers(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]
    const y = b[i]
    if (x === y) continue
    const xNum = typeof x === 'number' || DIGITS.test(x)
    const yNum = typeof y === 'number' || DIGITS.test(y)
    if (xNum && yNum) {
      const d = Number(x) - Number(y)
      if (d !== 0) return d < 0 ? -1 : 1
      continue
    }
    if (xNum !== yNum) return xNum ? -1 : 1
    return String(x) < String(y) ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

/** Total order of the `semver` crate: core, then pre-release (absent is greater), then build. */
export function compareSemver(a: SemVer, b: SemVer): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1
  if (a.pre.length === 0 || b.pre.length === 0) {
    if (a.pre.length !== b.pre.length) return a.pre.length === 0 ? 1 : -1
  } else {
    const c = compareIdentifiers(a.pre, b.pre)
    if (c !== 0) return c
  }
  return compareIdentifiers(a.build, b.build)
}

function version(major: number, minor: number, patch: number): SemVer {
  return { major, minor, patch, pre: [], build: [] }
}

/** `~1.2.3` => `[1.2.3, 1.3.0)` (the filter is padded first, so `~1` is `~1.0.0`). */
export function tildeRange(text: string): SemverRange | null {
  const v = parseSemver(text)
  return v === null ? null : { lower: v, upper: version(v.major, v.minor + 1, 0) }
}

/** `^1.2.3` => `[1.2.3, 2.0.0)`, `^0.2.3` => `[0.2.3, 0.3.0)`, `^0.0.3` => `[0.0.3, 0.0.4)`. */
export function caretRange(text: string): SemverRange | null {
  const v = parseSemver(text)
  if (v === null) return null
  if (v.major > 0) return { lower: v, upper: version(v.major + 1, 0, 0) }
  if (v.minor > 0) return { lower: v, upper: version(0, v.minor + 1, 0) }
  return { lower: v, upper: version(0, 0, v.patch + 1) }
}

/**
 * `1.*` => `[1.0.0, 2.0.0)`, `1.2.*` => `[1.2.0, 1.3.0)`, `*` => everything. A pattern with
 * no wildcard is a caret requirement, as in the `semver` crate's `VersionReq`.
 */
export function wildcardRange(text: string): SemverRange | null {
  const parts = normalize(text).split('.').map(stripLeadingZeros)
  if (parts.length > 3) return null
  const wild = parts.findIndex((p) => p === '*' || p === 'x' || p === 'X')
  if (wild === -1) return partialCaretRange(parts)
  if (parts.slice(wild).some((p) => p !== '*' && p !== 'x' && p !== 'X')) return null
  const fixed = parts.slice(0, wild)
  if (!fixed.every((p) => DIGITS.test(p))) return null
  const [major, minor] = fixed.map(Number)
  if (fixed.length === 0) return { lower: version(0, 0, 0), upper: null }
  if (fixed.length === 1) return { lower: version(major, 0, 0), upper: version(major + 1, 0, 0) }
  return { lower: version(major, minor, 0), upper: version(major, minor + 1, 0) }
}

function partialCaretRange(parts: string[]): SemverRange | null {
  if (parts.length === 3) return caretRange(parts.join('.'))
  if (!parts.every((p) => DIGITS.test(p))) return null
  const [major, minor] = parts.map(Number)
  if (parts.length === 1) return { lower: version(major, 0, 0), upper: version(major + 1, 0, 0) }
  if (major > 0) return { lower: version(major, minor, 0), upper: version(major + 1, 0, 0) }
  return { lower: version(0, minor, 0), upper: version(0, minor + 1, 0) }
}

/**
 * True when `v` lies in the range. Like the `semver` crate, a pre-release version only
 * matches when the lower bound is a pre-release of the same major.minor.patch.
 */
export function isInSemverRange(v: SemVer, range: SemverRange): boolean {
  const { lower, upper } = range
  if (v.pre.length > 0) {
    const sameCore = lower.major === v.major && lower.minor === v.minor && lower.patch === v.patch
    if (!(lower.pre.length > 0 && sameCore)) return false
  }
  if (compareSemver(v, lower) < 0) return false
  return upper === null || compareSemver(v, upper) < 0
}
