import { and, col, lit, type Expr } from './query-plan.ts'

/**
 * Who a query counts (`aggregation_group_type_index`): the event's merged person, or the event's
 * group of that type; `hasActor` leaves out events without one (no person, or no such group).
 */
export function actorOf(groupTypeIndex: number | null): { actor: Expr; hasActor: Expr } {
  const actor: Expr = groupTypeIndex === null ? { op: 'person_id' } : col(`group_${groupTypeIndex}`)
  const present: Expr = { op: 'not', arg: { op: 'is_null', arg: actor } }
  return { actor, hasActor: groupTypeIndex === null ? present : and(present, { op: 'binary', fn: '!=', left: actor, right: lit('') })! }
}
