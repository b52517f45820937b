import { RE2JS } from 're2js'

/** A compiled user pattern: an unanchored search, in time linear in the input's length. */
export interface RegexMatcher {
  /** Which engine runs the pattern; always the linear-time one (tests assert it). */
  readonly engine: 're2'
  test(input: string): boolean
}

/**
 * Compiles a regex that a user wrote (flag and cohort conditions, later action steps and property
 * filters) with RE2 semantics, through re2js, a JavaScript port of RE2: matching takes time linear in
 * the input, so a pattern like `^(a+)+$` cannot stall the event loop, whatever the input.
 *
 * Semantics follow PostHog's Rust flags service (`fancy_regex`): case-sensitive, unanchored search,
 * `.` does not match a newline; leading inline flags such as `(?i)` and named groups `(?P<n>...)` work.
 * Patterns that need backtracking (look-arounds, back-references) are not accepted by RE2: they
 * return null, which the callers treat as PostHog treats an invalid pattern (matches nothing, for
 * both `regex` and `not_regex`). The README lists where this differs from posthog-node's JS RegExp.
 */
export function compileRegex(pattern: string): RegexMatcher | null {
  let re: RE2JS
  try {
    re = RE2JS.compile(pattern)
  } catch {
    return null
  }
  return { engine: 're2', test: (input) => re.test(input) }
}
