import { hogqlError } from './hogql-error.ts'
import type { Token } from './hogql-lexer.ts'

/** Words that end an expression: never a bare field or an alias without AS. */
const RESERVED = new Set(
  ('select from where group by having order limit offset join left right inner outer full cross on as union settings format ' +
    'and or not in like ilike between is asc desc case when then else end distinct interval with window over using array ' +
    'prewhere sample final qualify into nulls all any semi anti asof global paste except intersect').split(' '),
)

export const isReserved = (word: string): boolean => RESERVED.has(word.toLowerCase())

/** Reads tokens in order; keyword tests are case-insensitive and never match quoted identifiers. */
export class TokenCursor {
  private at = 0
  constructor(private readonly tokens: Token[]) {}

  peek(ahead = 0): Token {
    return this.tokens[Math.min(this.at + ahead, this.tokens.length - 1)]!
  }

  next(): Token {
    const t = this.peek()
    if (this.at < this.tokens.length - 1) this.at++
    return t
  }

  isKeyword(word: string, ahead = 0): boolean {
    const t = this.peek(ahead)
    return t.type === 'ident' && t.value.toLowerCase() === word
  }

  isOp(op: string, ahead = 0): boolean {
    const t = this.peek(ahead)
    return t.type === 'op' && t.value === op
  }

  /** Consumes the keyword when it is next. */
  acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false
    this.next()
    return true
  }

  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false
    this.next()
    return true
  }

  expectKeyword(word: string): void {
    if (!this.acceptKeyword(word)) throw this.unexpected(`${word.toUpperCase()}`)
  }

  expectOp(op: string): void {
    if (!this.acceptOp(op)) throw this.unexpected(`"${op}"`)
  }

  /** A 400 naming what was found where `wanted` should have been. */
  unexpected(wanted?: string) {
    const t = this.peek()
    const found = t.type === 'eof' ? 'the end of the query' : `"${t.type === 'string' ? `'${t.value}'` : t.value}" at position ${t.pos}`
    return hogqlError(wanted ? `Expected ${wanted}, found ${found}.` : `Unexpected ${found}.`)
  }
}
