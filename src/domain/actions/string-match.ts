import { compileRegex, type RegexMatcher } from '../properties/compile-regex.ts'

/**
 * How a step compares a url, text or href, planned once and shared by the pure matcher and the
 * SQL compilers so that both read a step the same way:
 * - `exact`: string equality (case-sensitive);
 * - `regex`: an unanchored RE2 search with `source` as written;
 * - `contains`: SQL LIKE anywhere in the value, case-sensitive, `%` any run and `_` any one
 *   character (plugin-server's `matchString`), planned as the RE2 pattern `(?s)<escaped, % -> .*, _ -> .>`;
 * - `never`: an invalid regex (re2js refuses it; the SQL side then compiles the step to FALSE), or an unknown matching mode (Node's switch falls through to false).
 */
export type StringMatchPlan =
  | { kind: 'exact'; value: string }
  | { kind: 'regex'; source: string; regex: RegexMatcher }
  | { kind: 'never' }

/** Plans `value` compared with `matching` (null means the step's default for that field). */
export function planStringMatch(value: string, matching: string | null | undefined, fallback: 'exact' | 'contains'): StringMatchPlan {
  const mode = matching ?? fallback
  if (mode === 'exact') return { kind: 'exact', value }
  if (mode === 'regex' || mode === 'contains') {
    const source = mode === 'regex' ? value : likeToRegex(value)
    const regex = compileRegex(source)
    return regex === null ? { kind: 'never' } : { kind: 'regex', source, regex }
  }
  return { kind: 'never' }
}

/** SQL LIKE (no escape character) as an unanchored RE2 pattern. */
export function likeToRegex(like: string): string {
  let out = '(?s)'
  for (const ch of like) {
    if (ch === '%') out += '.*'
    else if (ch === '_') out += '.'
    else out += /[\\.+*?()|[\]{}^$]/.test(ch) ? `\\${ch}` : ch
  }
  return out
}

/** Tests one value against a plan. */
export function testStringMatch(plan: StringMatchPlan, actual: string): boolean {
  if (plan.kind === 'exact') return actual === plan.value
  if (plan.kind === 'regex') return plan.regex.test(actual)
  return false
}
