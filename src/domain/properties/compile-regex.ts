/**
 * Compiles a PostHog regex filter for JavaScript. PostHog's Rust service uses `fancy_regex`:
 * case-sensitive, unanchored search, no DOTALL. Two Rust spellings JS lacks are translated:
 * leading inline flags (`(?i)`, `(?s)`, `(?m)`, combined like `(?is)`) and named groups
 * `(?P<name>...)`. Returns null for a pattern neither engine accepts, which then matches nothing.
 */
export function compileRegex(pattern: string): RegExp | null {
  let source = pattern
  let flags = ''
  const inline = /^\(\?([ims]+)\)/.exec(source)
  if (inline) {
    flags = [...new Set(inline[1])].join('')
    source = source.slice(inline[0].length)
  }
  source = source.replace(/\(\?P</g, '(?<')
  try {
    return new RegExp(source, flags)
  } catch {
    return null
  }
}
