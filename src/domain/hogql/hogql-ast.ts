/**
 * The tree a HogQL SELECT parses into (the subset Tally runs). Pure data: the translator of each
 * event store turns it into that store's SQL; nothing of the original text is passed through.
 */

export type HogQLConstant = string | number | boolean | null

export type IntervalUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year'

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'like' | 'ilike' | 'not like' | 'not ilike' | 'in' | 'not in'

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%' | '||'

export type HogQLExpr =
  /** `digits`: an integer literal's exact value when a double cannot hold it (past 2^53). */
  | { kind: 'constant'; value: HogQLConstant; digits?: string }
  /** `event`, `properties.$browser`, `e.properties['$browser']`, `person.properties.email`: names as written. */
  | { kind: 'field'; chain: string[] }
  /** `*` or `alias.*`. */
  | { kind: 'star'; table: string | null }
  /** `count()`, `count(DISTINCT x)`, `quantile(0.9)(x)` (`params` are the first parentheses). */
  | { kind: 'call'; name: string; args: HogQLExpr[]; params: HogQLExpr[] | null; distinct: boolean }
  | { kind: 'arithmetic'; op: ArithmeticOp; left: HogQLExpr; right: HogQLExpr }
  | { kind: 'compare'; op: CompareOp; left: HogQLExpr; right: HogQLExpr }
  | { kind: 'and' | 'or'; args: HogQLExpr[] }
  | { kind: 'not'; arg: HogQLExpr }
  | { kind: 'negate'; arg: HogQLExpr }
  | { kind: 'is_null'; arg: HogQLExpr; negated: boolean }
  | { kind: 'between'; arg: HogQLExpr; low: HogQLExpr; high: HogQLExpr; negated: boolean }
  | { kind: 'case'; subject: HogQLExpr | null; when: Array<[HogQLExpr, HogQLExpr]>; else: HogQLExpr | null }
  | { kind: 'interval'; value: HogQLExpr; unit: IntervalUnit }
  /** `(a, b, c)` (the right side of IN) and `[a, b]`. */
  | { kind: 'tuple' | 'array'; items: HogQLExpr[] }
  | { kind: 'subquery'; query: HogQLSelect }

export interface SelectItem {
  expr: HogQLExpr
  alias: string | null
}

export type FromItem =
  | { kind: 'table'; name: string; alias: string | null }
  | { kind: 'subquery'; query: HogQLSelect; alias: string | null }

export interface JoinItem {
  type: 'inner' | 'left'
  from: FromItem
  on: HogQLExpr
}

export interface OrderItem {
  expr: HogQLExpr
  desc: boolean
}

export interface HogQLSelect {
  distinct: boolean
  select: SelectItem[]
  from: FromItem | null
  joins: JoinItem[]
  where: HogQLExpr | null
  groupBy: HogQLExpr[]
  having: HogQLExpr | null
  orderBy: OrderItem[]
  limit: number | null
  offset: number | null
}

/** The tables a HogQL query may read: the project's own, nothing else exists for it. */
export const HOGQL_TABLES = ['events', 'persons', 'sessions'] as const
