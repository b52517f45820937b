import { validationError } from '../../shared/errors.ts'

/** A parsed trends formula (`A+B*2`, `(A-B)/A`): series letters, numbers, + - * / and parentheses. */
export type Formula =
  | { kind: 'series'; index: number }
  | { kind: 'number'; value: number }
  | { kind: 'negate'; arg: Formula }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: Formula; right: Formula }

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z])|([-+*/()]))/y

/**
 * Parses a formula with a small recursive-descent parser (never `eval`): letters name series in
 * order (A = first), case-insensitive as in PostHog. Throws a 400 naming `attr` on anything else,
 * or on a letter past the last series.
 */
export function parseFormula(text: string, seriesCount: number, attr: string): Formula {
  const tokens: string[] = []
  let at = 0
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break
    TOKEN.lastIndex = at
    const m = TOKEN.exec(text)
    if (!m) throw validationError(attr, `Cannot read the formula at "${text.slice(at, at + 10)}".`, 'invalid_input')
    tokens.push(m[1] ?? (m[2] ? m[2].toUpperCase() : m[3]!))
    at = TOKEN.lastIndex
  }
  if (tokens.length > 200) throw validationError(attr, 'The formula is too long.', 'invalid_input')
  let i = 0
  const fail = (): never => {
    throw validationError(attr, `Invalid formula "${text}".`, 'invalid_input')
  }
  const primary = (): Formula => {
    const t = tokens[i++]
    if (t === undefined) return fail()
    if (t === '(') {
      const inner = sum()
      if (tokens[i++] !== ')') fail()
      return inner
    }
    if (t === '-') return { kind: 'negate', arg: primary() }
    if (/^\d/.test(t)) return { kind: 'number', value: Number(t) }
    if (/^[A-Z]$/.test(t)) {
      const index = t.charCodeAt(0) - 65
      if (index >= seriesCount) throw validationError(attr, `The formula names series ${t}, but the query has ${seriesCount} series.`, 'invalid_input')
      return { kind: 'series', index }
    }
    return fail()
  }
  const product = (): Formula => {
    let left = primary()
    while (tokens[i] === '*' || tokens[i] === '/') {
      const op = tokens[i++] as '*' | '/'
      left = { kind: 'binary', op, left, right: primary() }
    }
    return left
  }
  const sum = (): Formula => {
    let left = product()
    while (tokens[i] === '+' || tokens[i] === '-') {
      const op = tokens[i++] as '+' | '-'
      left = { kind: 'binary', op, left, right: product() }
    }
    return left
  }
  const formula = sum()
  if (i !== tokens.length) fail()
  return formula
}

/** The formula's value from the series' values at one point; dividing by zero gives 0, as PostHog shows it. */
export function evaluateFormula(f: Formula, values: readonly number[]): number {
  switch (f.kind) {
    case 'series':
      return values[f.index] ?? 0
    case 'number':
      return f.value
    case 'negate':
      return -evaluateFormula(f.arg, values)
    case 'binary': {
      const a = evaluateFormula(f.left, values)
      const b = evaluateFormula(f.right, values)
      if (f.op === '+') return a + b
      if (f.op === '-') return a - b
      if (f.op === '*') return a * b
      return b === 0 ? 0 : a / b
    }
  }
}
