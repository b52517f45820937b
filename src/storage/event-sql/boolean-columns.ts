import type { Expr, Plan } from '../../domain/query/query-plan.ts'
import { assertNever } from '../../domain/properties/property-operators.ts'

/**
 * The aliases of a plan's selected columns whose values are booleans. An engine without a boolean
 * type (ClickHouse 18.16 answers comparisons as UInt8 1/0) reads these columns back as `true`/`false`,
 * so every engine gives runners the same values. A column of a subquery, join or spread source is
 * boolean when the source plan selected it as one.
 */
export function booleanColumns(plan: Plan): Set<string> {
  // Once per plan object: a column reads its source's columns, so without this a deep plan (a breakdown
  // funnel's layers) is walked once per path through it, exponentially often (it hung the query).
  let out = known.get(plan)
  if (out === undefined) {
    out = new Set<string>()
    for (const s of plan.select) if (isBoolean(s.expr, plan)) out.add(s.alias)
    known.set(plan, out)
  }
  return out
}

const known = new WeakMap<Plan, Set<string>>()

function sourceColumnIsBoolean(plan: Plan, name: string): boolean {
  const s = plan.source
  switch (s.kind) {
    case 'events':
    case 'session_partials':
      return false
    case 'plan':
    case 'spread':
      return booleanColumns(s.plan).has(name)
    case 'sequence':
      // The plan's own columns; the steps' columns are numbers (positions, sums, counts) or the lagged value.
      return booleanColumns(s.plan).has(name) || s.steps.some((st) => st.alias === name && (st.fn === 'lag' || st.fn === 'lead' || st.fn === 'partition_min' || st.fn === 'partition_max') && st.arg !== undefined && isBoolean(st.arg, s.plan))
    case 'join':
      return booleanColumns(s.left).has(name) || booleanColumns(s.right).has(name)
    default:
      return assertNever(s)
  }
}

function isBoolean(e: Expr, plan: Plan): boolean {
  const of = (a: Expr): boolean => isBoolean(a, plan)
  switch (e.op) {
    case 'literal':
      return typeof e.value === 'boolean'
    case 'column':
      return sourceColumnIsBoolean(plan, e.name)
    case 'binary':
      return ['=', '!=', '<', '<=', '>', '>='].includes(e.fn)
    case 'and':
    case 'or':
    case 'not':
    case 'is_null':
    case 'in':
    case 'in_plan':
    case 'bits_any':
    case 'property_filter':
    case 'value_filter':
    case 'action':
    case 'matches':
    case 'regex_match':
    case 'value_filter':
      return true
    case 'case':
      return allBooleanOrNull([...e.when.map(([, v]) => v), e.else], of)
    case 'coalesce':
      return allBooleanOrNull(e.args, of)
    case 'aggregate':
      return (e.fn === 'any' || e.fn === 'min' || e.fn === 'max' || e.fn === 'arg_min' || e.fn === 'arg_max') && e.arg !== undefined && of(e.arg)
    case 'window':
      return (e.fn === 'lag' || e.fn === 'lead' || e.fn === 'min' || e.fn === 'max' || e.fn === 'any') && e.arg !== undefined && of(e.arg)
    case 'time':
    case 'property':
    case 'properties':
    case 'person_id':
    case 'floor':
    case 'to_number':
    case 'bucket':
    case 'shift':
    case 'epoch_ms':
    case 'time_of_ms':
    case 'bit_flag':
    case 'bits_shift_right':
    case 'concat':
    case 'to_text':
    case 'lower':
    case 'regex_extract':
    case 'lookup':
    case 'regex_replace':
    case 'property_bundle':
    case 'bundle_property':
      return false
    default:
      return assertNever(e)
  }
}

/** Values that are each a boolean or NULL, at least one a boolean (a CASE's branches, COALESCE's arguments). */
function allBooleanOrNull(values: readonly Expr[], of: (e: Expr) => boolean): boolean {
  const isNull = (v: Expr) => v.op === 'literal' && v.value === null
  return values.every((v) => isNull(v) || of(v)) && values.some((v) => !isNull(v))
}
