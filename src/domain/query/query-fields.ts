import { validationError } from '../../shared/errors.ts'

/** A JSON object of a query (PostHog's query schema); fields are read with the readers below. */
export type Node = Record<string, unknown>

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v)

/** An object field (or the node itself); `undefined` when absent and optional. */
export function readNode(v: unknown, attr: string, opts: { optional: true }): Node | undefined
export function readNode(v: unknown, attr: string, opts?: { optional?: false }): Node
export function readNode(v: unknown, attr: string, opts: { optional?: boolean } = {}): Node | undefined {
  if (v === undefined || v === null) {
    if (opts.optional) return undefined
    throw validationError(attr, 'This field is required.', 'required')
  }
  if (typeof v !== 'object' || Array.isArray(v)) throw validationError(attr, `Expected an object, got ${kindOf(v)}.`, 'invalid_input')
  return v as Node
}

export function readText(v: unknown, attr: string, opts: { optional?: boolean; nullable?: boolean } = {}): string | undefined {
  if (v === undefined || v === null) {
    if (opts.optional || opts.nullable) return undefined
    throw validationError(attr, 'This field is required.', 'required')
  }
  if (typeof v !== 'string') throw validationError(attr, `Expected a string, got ${kindOf(v)}.`, 'invalid_input')
  return v
}

export function readChoice<T extends string>(v: unknown, attr: string, choices: readonly T[], fallback?: T): T {
  if ((v === undefined || v === null) && fallback !== undefined) return fallback
  if (typeof v !== 'string' || !choices.includes(v as T)) {
    throw validationError(attr, `"${typeof v === 'string' ? v : kindOf(v)}" is not a valid choice (${choices.join(', ')}).`, 'invalid_choice')
  }
  return v as T
}

export function readInteger(v: unknown, attr: string, opts: { min?: number; max?: number; fallback?: number } = {}): number | undefined {
  if (v === undefined || v === null) return opts.fallback
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw validationError(attr, 'A valid integer is required.', 'invalid')
  if (opts.min !== undefined && n < opts.min) throw validationError(attr, `Ensure this value is greater than or equal to ${opts.min}.`, 'min_value')
  if (opts.max !== undefined && n > opts.max) throw validationError(attr, `Ensure this value is less than or equal to ${opts.max}.`, 'max_value')
  return n
}

export function readFlag(v: unknown, attr: string, fallback = false): boolean {
  if (v === undefined || v === null) return fallback
  if (typeof v !== 'boolean') throw validationError(attr, 'Must be a valid boolean.', 'invalid')
  return v
}

export function readArray(v: unknown, attr: string, opts: { optional?: boolean } = {}): unknown[] {
  if (v === undefined || v === null) {
    if (opts.optional) return []
    throw validationError(attr, 'This field is required.', 'required')
  }
  if (!Array.isArray(v)) throw validationError(attr, `Expected a list, got ${kindOf(v)}.`, 'invalid_input')
  return v
}

/**
 * The leaf filters of a property filter list or PostHog's nested `PropertyGroupFilter` (groups are
 * the nodes with a `values` list), in order: what is read before building, e.g. the cohorts or
 * actions the filters name.
 */
export function filterLeaves(properties: unknown): Node[] {
  const leaves: Node[] = []
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') {
      const n = v as Node
      if (Array.isArray(n.values)) walk(n.values)
      else leaves.push(n)
    }
  }
  walk(properties)
  return leaves
}
