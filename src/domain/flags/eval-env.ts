import type { PropertyBag } from '../properties/property-filter.ts'

/** Per-evaluation state shared by the compiled filters of all flags. */
export interface EvalEnv {
  person: PropertyBag
  /** Group properties by group type index; undefined when the group was not supplied. */
  groupBags: ReadonlyArray<PropertyBag | undefined>
  now: number
  /** Static cohort ids (as strings) the person belongs to. */
  staticCohorts: ReadonlySet<string>
  /** Value of another flag (`false`, `true` or a variant key), evaluating it on first use. */
  flagValue: (flagIndex: number) => boolean | string
  /**
   * Results of the shared filters of this evaluation by slot (0: not yet, 1: true, 2: false): a
   * filter that several flags use (the same key, operator and value on the same bag) runs once.
   */
  memo: Uint8Array
}

/** A compiled filter of a condition or cohort. */
export type EnvMatcher = (env: EvalEnv) => boolean

export const EMPTY_BAG: PropertyBag = Object.freeze({})
