import { isPropertyGroup, type PropertyFilter, type PropertyGroup } from '../../domain/properties/property-filter.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import type { PersonDataWriter } from '../persons/person-data-store.ts'
import { KNOWN_OPERATORS } from '../../domain/properties/property-operators.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { CohortStore } from './cohort-store.ts'
import type { Cohort, CohortWrite } from './cohort-types.ts'

const LEAF_TYPES = new Set(['person', 'cohort', 'behavioral', 'static-cohort'])
const invalid = (detail: string, attr = 'filters') => validationError(attr, detail, 'invalid_input')

/** Checks a dynamic cohort's nested AND/OR property groups; cohort references must exist in the project. */
function validatePropertyGroup(node: PropertyGroup | PropertyFilter, cohortIds: ReadonlySet<number>, depth = 0): void {
  if (node === null || typeof node !== 'object') throw invalid('Filters are not valid: every value must be a group or a property')
  if (depth > 10) throw invalid('Filters are not valid: groups are nested too deeply')
  if (isPropertyGroup(node)) {
    if (node.type !== 'AND' && node.type !== 'OR') throw invalid(`Filters are not valid: group type must be AND or OR, not ${String(node.type)}`)
    for (const child of node.values) validatePropertyGroup(child, cohortIds, depth + 1)
    return
  }
  if (typeof node.key !== 'string' && node.type !== 'cohort') throw invalid('Filters are not valid: every property needs a key')
  const type = node.type ?? 'person'
  if (!LEAF_TYPES.has(type)) throw invalid(`Filters are not valid: property type ${type} cannot be used in cohorts`)
  if (type === 'cohort' && !cohortIds.has(Number(node.value))) throw invalid(`Cohort with id ${String(node.value)} does not exist`)
  if (type === 'person' && node.operator != null && !KNOWN_OPERATORS.has(node.operator)) throw invalid(`Invalid operator: ${node.operator}`)
}

/** Distinct ids from an uploaded CSV: first column, a `distinct_id` header row skipped. */
export function distinctIdsFromCsv(csv: string): string[] {
  const ids: string[] = []
  for (const line of csv.split(/\r?\n/)) {
    const first = line.split(',')[0]?.trim().replace(/^"(.*)"$/, '$1') ?? ''
    if (first !== '' && !(ids.length === 0 && /^distinct[_ ]?id$/i.test(first))) ids.push(first)
  }
  return ids
}

/**
 * Cohorts as far as flags need them: dynamic cohorts (property groups over person properties) and
 * static cohorts whose members are uploaded by distinct id (CSV text, `distinct_ids`) or person UUID.
 */
export function createCohortService(store: CohortStore, persons: PersonDataWriter, onChange: (projectId: number) => void) {
  async function readWrite(project: Project, body: Record<string, unknown>, existing: Cohort | null): Promise<CohortWrite> {
    const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k)
    const name = has('name') ? body.name : (existing?.name ?? '')
    if (typeof name !== 'string') throw validationError('name', 'Not a valid string.', 'invalid')
    const description = has('description') ? body.description : (existing?.description ?? '')
    if (typeof description !== 'string') throw validationError('description', 'Not a valid string.', 'invalid')
    const isStatic = has('is_static') ? body.is_static === true : (existing?.isStatic ?? false)
    let filters = existing?.filters ?? null
    if (has('filters') && body.filters != null) {
      const f = body.filters as { properties?: PropertyGroup }
      if (typeof f !== 'object' || !f.properties || !isPropertyGroup(f.properties)) throw invalid('Filters must be {"properties": {"type": "AND"|"OR", "values": [...]}}')
      const ids = new Set((await store.listLive(project.id)).map((c) => c.id))
      validatePropertyGroup(f.properties, ids)
      filters = { properties: f.properties }
    }
    const groups = has('groups') ? body.groups : (existing?.groups ?? [])
    if (!Array.isArray(groups)) throw validationError('groups', 'Expected a list of items.', 'not_a_list')
    const deleted = has('deleted') ? body.deleted === true : (existing?.deleted ?? false)
    return { name, description, filters: isStatic ? null : filters, groups, isStatic, deleted }
  }

  async function addMembersFromBody(project: Project, cohort: Cohort, body: Record<string, unknown>) {
    const distinctIds: string[] = []
    if (typeof body.csv === 'string') distinctIds.push(...distinctIdsFromCsv(body.csv))
    if (Array.isArray(body.distinct_ids)) distinctIds.push(...body.distinct_ids.filter((d): d is string => typeof d === 'string'))
    const uuids = Array.isArray(body._create_static_person_ids) ? body._create_static_person_ids.map(String) : []
    if (distinctIds.length === 0 && uuids.length === 0) return
    if (!cohort.isStatic) throw validationError('csv', 'Persons can only be added to static cohorts.', 'invalid_input')
    const personIds = [...(await persons.ensurePersons(project.id, distinctIds)).values()]
    personIds.push(...(await persons.findPersonIdsByUuid(project.id, uuids)))
    await store.addMembers(cohort.id, personIds)
  }

  async function get(project: Project, id: number): Promise<Cohort> {
    const cohort = Number.isSafeInteger(id) ? await store.get(project.id, id) : null
    if (!cohort) throw new AppError('not_found', 'Not found.')
    return cohort
  }

  return {
    list: (project: Project) => store.listLive(project.id),
    get,
    async create(project: Project, user: User, body: Record<string, unknown>): Promise<Cohort> {
      const cohort = await store.insert({ projectId: project.id, userId: user.id, cohort: await readWrite(project, body, null) })
      await addMembersFromBody(project, cohort, body)
      onChange(project.id)
      return get(project, cohort.id)
    },
    async update(project: Project, id: number, body: Record<string, unknown>): Promise<Cohort> {
      const existing = await get(project, id)
      const cohort = await store.update({ projectId: project.id, id, cohort: await readWrite(project, body, existing) })
      await addMembersFromBody(project, cohort, body)
      onChange(project.id)
      return get(project, id)
    },
    /** PostHog's `add_persons_to_static_cohort`: person UUIDs in `person_ids`. */
    async addPersons(project: Project, id: number, personUuids: unknown): Promise<Cohort> {
      const cohort = await get(project, id)
      if (!Array.isArray(personUuids)) throw validationError('person_ids', 'This field is required.', 'required')
      await addMembersFromBody(project, cohort, { _create_static_person_ids: personUuids })
      onChange(project.id)
      return get(project, id)
    },
  }
}

export type CohortService = ReturnType<typeof createCohortService>
