import { OPERATORS, PROPERTY_OPERATORS, type PropertyOperator } from '../../src/domain/properties/property-operators.ts'

/**
 * The editors' operator lists, from the one operator table (src/domain/properties): a new operator
 * shows up here with its label, and its value is entered as its shape says.
 */
export type EditorOperator = readonly [PropertyOperator, string]

const entry = (o: PropertyOperator): EditorOperator => [o, PROPERTY_OPERATORS[o].label]

/** Flag conditions: every operator but flag dependencies (edited as such in PostHog, not here). */
export const FLAG_OPERATORS: readonly EditorOperator[] = OPERATORS.filter((o) => PROPERTY_OPERATORS[o].value !== 'flag').map(entry)

/** Cohort person-property criteria: the operators person filters run. */
export const COHORT_OPERATORS: readonly EditorOperator[] = OPERATORS.filter((o) => PROPERTY_OPERATORS[o].runsOn.persons).map(entry)

/** Whether the operator takes a value (is_set and is_not_set do not). */
export function takesValue(operator: string): boolean {
  return !(operator in PROPERTY_OPERATORS) || PROPERTY_OPERATORS[operator as PropertyOperator].value !== 'none'
}

/**
 * The stored value of an editor's text: the operator's name for value-less operators (PostHog
 * stores `is_set` so), a list for list shapes (`a, b`) or when the stored value was a list.
 */
export function editorValue(operator: string, text: string, isList = false): unknown {
  const shape = operator in PROPERTY_OPERATORS ? PROPERTY_OPERATORS[operator as PropertyOperator].value : 'scalars'
  if (shape === 'none') return operator
  if (isList || shape === 'texts' || shape === 'range') return text.split(',').map((v) => v.trim())
  return text
}
