import type { PropertyBag } from '../properties/property-filter.ts'
import type { CompiledCondition, CompiledFlag, CompiledFlags } from './compile-flags.ts'
import { EMPTY_BAG } from './eval-env.ts'
import type { EvalEnv } from './eval-env.ts'
import type { FlagEvaluation, FlagEvaluationContext, FlagEvaluationResult, FlagReasonCode } from './flag-types.ts'
import { hashFlag, hashHoldout } from './hash.ts'
import { describeReason, REASON_SCORE } from './flag-reasons.ts'

const hasOwn = Object.prototype.hasOwnProperty
const NO_COHORTS: ReadonlySet<string> = new Set()

/** Per-call inputs the conditions need besides the compiled filters. */
interface CallState {
  env: EvalEnv
  ctx: FlagEvaluationContext
  /** Group key by group type index (undefined when not supplied or empty). */
  groupKeys: (string | undefined)[]
}

/**
 * Evaluates compiled flags for one person (and their groups), as PostHog's flags service does:
 * early-access enrolment (`super_groups` / `feature_enrollment`) first, then the experiment
 * holdout, then condition sets in order (variant overrides first), OR-ed, each an AND of its
 * filters followed by the rollout check on `sha1("<key>.<identifier>")`; the variant comes
 * from the `variant`-salted hash. Flag dependencies are evaluated on demand and at most once.
 * Pure and synchronous: the caller supplies merged properties, memberships and `now`.
 */
export function evaluateFlags(compiled: CompiledFlags, ctx: FlagEvaluationContext): FlagEvaluationResult {
  const state = createCallState(compiled, ctx)
  const { flags } = compiled
  const results: (FlagEvaluation | undefined)[] = new Array(flags.length)
  const evaluateAt = (i: number): FlagEvaluation => {
    let result = results[i]
    if (result === undefined) {
      result = evaluateFlag(flags[i], state)
      results[i] = result
    }
    return result
  }
  state.env.flagValue = (i) => evaluateAt(i).value

  const out: FlagEvaluation[] = []
  let errors = false
  const wanted = ctx.flagKeysToEvaluate ? new Set(ctx.flagKeysToEvaluate) : null
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i]
    if (wanted !== null && !wanted.has(flag.key)) continue
    if (!flag.active && ctx.includeInactive !== true) continue
    const result = evaluateAt(i)
    if (result.errored) errors = true
    out.push(result)
  }
  return { flags: out, errorsWhileComputingFlags: errors }
}

function createCallState(compiled: CompiledFlags, ctx: FlagEvaluationContext): CallState {
  const groupKeys: (string | undefined)[] = []
  const groupBags: (PropertyBag | undefined)[] = []
  for (const [index, name] of compiled.groupTypeNames) {
    const raw = ctx.groups?.[name]
    const key = typeof raw === 'number' ? (Number.isFinite(raw) ? String(raw) : undefined) : raw || undefined
    groupKeys[index] = key
    const props = ctx.groupProperties?.[name]
    // PostHog adds the supplied group key as `$group_key` to that group's properties.
    if (key !== undefined) groupBags[index] = props && hasOwn.call(props, '$group_key') ? props : { $group_key: key, ...props }
    else groupBags[index] = props
  }
  const stored = ctx.personProperties ?? EMPTY_BAG
  // PostHog matches `distinct_id` as a person property unless the person has one.
  const person = hasOwn.call(stored, 'distinct_id') ? stored : { distinct_id: ctx.distinctId, ...stored }
  let staticCohorts = NO_COHORTS
  if (compiled.usesStaticCohorts && ctx.staticCohortIds) staticCohorts = new Set([...ctx.staticCohortIds].map(String))
  const env: EvalEnv = { person, groupBags, now: ctx.now, staticCohorts, flagValue: () => false, memo: new Uint8Array(compiled.filterSlots) }
  return { env, ctx, groupKeys }
}

/** The identifier hashed for a condition, or null when it cannot be bucketed (no group / device id). */
function identifierFor(flag: CompiledFlag, aggregation: number | null, state: CallState): string | null {
  if (aggregation !== null) return state.groupKeys[aggregation] ?? null
  const ctx = state.ctx
  if (flag.deviceBucketing) return ctx.deviceId ? ctx.deviceId : null
  const override = ctx.hashKeyOverrides?.[flag.key]
  if (override !== undefined) return override
  if (flag.continuity && ctx.anonDistinctId) return ctx.anonDistinctId
  return ctx.distinctId
}

function evaluateFlag(flag: CompiledFlag, state: CallState): FlagEvaluation {
  if (!flag.active) return finish(flag, false, null, 'flag_disabled', null)
  if (flag.brokenDependency) return finish(flag, false, null, 'missing_dependency', null, true)
  const early = evaluateSuperCondition(flag, state) ?? evaluateHoldout(flag, state)
  if (early !== null) return early
  if (flag.conditions.length === 0) return finish(flag, false, null, 'no_condition_match', null)

  let best: FlagReasonCode = 'no_group_type'
  let bestIndex: number | null = null
  let skippedGroupCondition = false
  let hashedId: string | null = null
  let rolloutHash = 0
  for (const condition of flag.conditions) {
    let code: FlagReasonCode
    const identifier = identifierFor(flag, condition.aggregation, state)
    if (identifier === null) {
      // Rust skips the condition: no group key => no_group_type, no device id => out of rollout.
      if (condition.aggregation !== null) skippedGroupCondition = true
      code = condition.aggregation !== null ? 'no_group_type' : 'out_of_rollout_bound'
    } else if (!matchesFilters(condition, state.env)) {
      code = 'no_condition_match'
    } else {
      if (condition.rollout < 100 && identifier !== hashedId) {
        hashedId = identifier
        rolloutHash = hashFlag(flag.key, identifier)
      }
      if (condition.rollout < 100 && rolloutHash > condition.rollout / 100) {
        code = 'out_of_rollout_bound'
      } else {
        const variant = condition.variant ?? matchingVariant(flag, identifier)
        return finish(flag, true, variant, 'condition_match', condition.index)
      }
    }
    // Ties go to the later condition, as in Rust's get_highest_priority_match_evaluation.
    if (REASON_SCORE[best] <= REASON_SCORE[code]) {
      best = code
      bestIndex = condition.index
    }
  }
  return finish(flag, false, null, best, bestIndex, false, best === 'no_condition_match' && skippedGroupCondition)
}

function matchesFilters(condition: CompiledCondition, env: EvalEnv): boolean {
  const filters = condition.filters
  for (let i = 0; i < filters.length; i++) if (!filters[i](env)) return false
  return true
}

function matchingVariant(flag: CompiledFlag, identifier: string): string | null {
  const bounds = flag.variantBounds
  if (bounds.length === 0) return null
  const hash = hashFlag(flag.key, identifier, 'variant')
  for (let i = 0; i < bounds.length; i++) if (hash < bounds[i]) return flag.variantKeys[i]
  return null
}

/** Early-access enrolment: decides the flag when the person carries the enrolment property. */
function evaluateSuperCondition(flag: CompiledFlag, state: CallState): FlagEvaluation | null {
  const gate = flag.superCondition
  if (gate === null) return null
  const person = state.env.person
  if (gate.kind === 'enrollment') {
    if (!hasOwn.call(person, gate.propertyKey)) return null
    const value = person[gate.propertyKey]
    return finish(flag, value === true || value === 'true', null, 'super_condition_value', 0)
  }
  if (!gate.keys.some((k) => hasOwn.call(person, k))) return null
  const condition = gate.condition
  const identifier = identifierFor(flag, null, state) ?? state.ctx.distinctId
  const matched =
    matchesFilters(condition, state.env) &&
    (condition.rollout >= 100 || hashFlag(flag.key, identifier) <= condition.rollout / 100)
  return finish(flag, matched, null, 'super_condition_value', 0)
}

/** Experiment holdout: `sha1("holdout-<identifier>")` within the exclusion share => held out. */
function evaluateHoldout(flag: CompiledFlag, state: CallState): FlagEvaluation | null {
  const holdout = flag.holdout
  if (holdout === null) return null
  const ctx = state.ctx
  let identifier: string
  if (flag.aggregation !== null) identifier = state.groupKeys[flag.aggregation] ?? ''
  else if (flag.deviceBucketing && ctx.deviceId) identifier = ctx.deviceId
  else identifier = flag.continuity && ctx.anonDistinctId ? ctx.anonDistinctId : ctx.distinctId
  const { percentage } = holdout
  if (percentage !== null && percentage < 100 && hashHoldout(identifier) > percentage / 100) return null
  return finish(flag, true, holdout.variant, 'holdout_condition_value', null)
}

const CODE_INDEX: Readonly<Record<FlagReasonCode, number>> = {
  condition_match: 0,
  no_condition_match: 1,
  out_of_rollout_bound: 2,
  no_group_type: 3,
  super_condition_value: 4,
  holdout_condition_value: 5,
  flag_disabled: 6,
  missing_dependency: 7,
}

/**
 * A small integer naming everything a result depends on (reason code, condition index, variant,
 * enabled, errored, description variant), or -1 when the variant is not one of the flag's (holdout).
 */
function outcomeKey(flag: CompiledFlag, enabled: boolean, variant: string | null, code: FlagReasonCode, index: number | null, bits: number): number {
  let v = 0
  if (enabled && variant !== null) {
    v = flag.variantKeys.indexOf(variant) + 1
    if (v === 0) return -1
  }
  return ((((index ?? -1) + 1) * 8 + CODE_INDEX[code]) * (flag.variantKeys.length + 1) + v) * 8 + bits
}

function finish(
  flag: CompiledFlag,
  enabled: boolean,
  variant: string | null,
  code: FlagReasonCode,
  conditionIndex: number | null,
  errored = false,
  groupsNotEvaluated = false,
): FlagEvaluation {
  const key = outcomeKey(flag, enabled, variant, code, conditionIndex, (enabled ? 1 : 0) | (errored ? 2 : 0) | (groupsNotEvaluated ? 4 : 0))
  const known = key < 0 ? undefined : flag.outcomes.get(key)
  if (known !== undefined) return known
  const payload = enabled && flag.payloads !== null ? (flag.payloads[variant ?? 'true'] ?? null) : null
  const result: FlagEvaluation = Object.freeze({
    key: flag.key,
    enabled,
    variant: enabled ? variant : null,
    value: enabled ? (variant ?? true) : false,
    payload,
    reason: Object.freeze({ code, conditionIndex, description: describeReason(code, conditionIndex, groupsNotEvaluated) }),
    flagId: flag.id,
    version: flag.version,
    errored,
  })
  if (key >= 0) flag.outcomes.set(key, result)
  return result
}
