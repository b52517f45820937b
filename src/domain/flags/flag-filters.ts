import type { PropertyFilter } from '../properties/property-filter.ts'
import type { FlagFilters } from './flag-types.ts'

/** Every property filter of a flag's conditions (groups and super groups) with the aggregation it is evaluated under. */
export function flagFilters(filters: FlagFilters): Array<{ filter: PropertyFilter; aggregation: number | null }> {
  const out: Array<{ filter: PropertyFilter; aggregation: number | null }> = []
  const flagAggregation = filters.aggregation_group_type_index ?? null
  const groups = [...(filters.groups ?? [{ properties: filters.properties ?? [] }]), ...(filters.super_groups ?? [])]
  for (const g of groups) {
    const aggregation = g.aggregation_group_type_index !== undefined ? (g.aggregation_group_type_index ?? null) : flagAggregation
    for (const filter of g.properties ?? []) out.push({ filter, aggregation })
  }
  return out
}
