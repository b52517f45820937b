import { hogqlError } from './hogql-error.ts'
import { lookupTable } from '../../shared/lookup-table.ts'

export type TokenType = 'ident' | 'quoted' | 'string' | 'number' | 'op' | 'placeholder' | 'eof'

export interface Token {
  type: TokenType
  /** Identifier or operator text, a string's unescaped value, a number's digits, a placeholder's name. */
  value: string
  /** Offset in the query text (for error messages). */
  pos: number
}

const OPERATORS = ['==', '!=', '<>', '<=', '>=', '||', '::', '=', '<', '>', '+', '-', '*', '/', '%', '(', ')', ',', '.', '[', ']', ';', '?', ':']
const IDENT_START = /[A-Za-z_$]/
const IDENT_PART = /[A-Za-z0-9_$]/
const DIGIT = /[0-9]/

/** The longest text a query may have (PostHog's queries are far shorter; this bounds the parser's work). */
export const MAX_QUERY_LENGTH = 100_000

/**
 * Splits HogQL text into tokens. Comments (`--`, `/* *\/`) are skipped; strings take `\\` escapes and
 * doubled quotes; identifiers may be quoted with backticks or double quotes; `{name}` is a placeholder.
 */
export function tokenize(text: string): Token[] {
  if (text.length > MAX_QUERY_LENGTH) throw hogqlError(`The query is longer than ${MAX_QUERY_LENGTH} characters.`)
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (/\s/.test(c)) {
      i++
    } else if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i)
      i = end < 0 ? text.length : end + 1
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2)
      if (end < 0) throw hogqlError(`Unterminated comment at position ${i}.`)
      i = end + 2
    } else if (c === "'") {
      const [value, next] = readQuoted(text, i, "'")
      tokens.push({ type: 'string', value, pos: i })
      i = next
    } else if (c === '`' || c === '"') {
      const [value, next] = readQuoted(text, i, c)
      if (value === '') throw hogqlError(`Empty quoted identifier at position ${i}.`)
      tokens.push({ type: 'quoted', value, pos: i })
      i = next
    } else if (DIGIT.test(c) || (c === '.' && DIGIT.test(text[i + 1] ?? ''))) {
      const m = /^(?:0x[0-9a-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?)/i.exec(text.slice(i))!
      if (IDENT_START.test(text[i + m[0].length] ?? '')) throw hogqlError(`Unexpected "${text.slice(i, i + m[0].length + 1)}" at position ${i}.`)
      tokens.push({ type: 'number', value: m[0], pos: i })
      i += m[0].length
    } else if (IDENT_START.test(c)) {
      let j = i + 1
      while (j < text.length && IDENT_PART.test(text[j]!)) j++
      tokens.push({ type: 'ident', value: text.slice(i, j), pos: i })
      i = j
    } else if (c === '{') {
      const m = /^\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}/.exec(text.slice(i))
      if (!m) throw hogqlError(`Unexpected "{" at position ${i}: placeholders are written {name}.`)
      tokens.push({ type: 'placeholder', value: m[1]!, pos: i })
      i += m[0].length
    } else {
      const op = OPERATORS.find((o) => text.startsWith(o, i))
      if (!op) throw hogqlError(`Unexpected character "${c}" at position ${i}.`)
      tokens.push({ type: 'op', value: op, pos: i })
      i += op.length
    }
  }
  tokens.push({ type: 'eof', value: '', pos: text.length })
  return tokens
}

const ESCAPES = lookupTable<string>({ n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', '\\': '\\', "'": "'", '"': '"', '`': '`' })

function readQuoted(text: string, start: number, quote: string): [string, number] {
  let out = ''
  let i = start + 1
  while (i < text.length) {
    const c = text[i]!
    if (c === '\\') {
      const next = text[i + 1]
      if (next === undefined) break
      out += ESCAPES[next] ?? next
      i += 2
    } else if (c === quote) {
      if (text[i + 1] === quote) {
        out += quote
        i += 2
      } else {
        return [out, i + 1]
      }
    } else {
      out += c
      i++
    }
  }
  throw hogqlError(`Unterminated ${quote === "'" ? 'string' : 'identifier'} starting at position ${start}.`)
}
