import { isPropertyGroup, type PropertyFilter, type PropertyGroup } from '../../domain/properties/property-filter.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import type { PersonDataWriter } from '../persons/person-data-store.ts'
import { KNOWN_OPERATORS } from '../../domain/properties/property-operators.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { CohortStore } from './cohort-store.ts'
import type { Cohort, CohortWrite } from './cohort-types.ts'
import type { CohortBody } from './cohort-schemas.ts'
import type { Page } from '../../shared/page.ts'
import { behavioralShapeProblem } from '../../domain/query/behavioral-expr.ts'

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
  const type = node.type ?? 'person'
  // Behavioural criteria name actions by id, a number.
  if (typeof node.key !== 'string' && type !== 'cohort' && type !== 'behavioral') throw invalid('Filters are not valid: every property needs a key')
  if (!LEAF_TYPES.has(type)) throw invalid(`Filters are not valid: property type ${type} cannot be used in cohorts`)
  if (type === 'behavioral') {
    const problem = behavioralShapeProblem(node as unknown as Record<string, unknown>)
    if (problem) throw invalid(`Filters are not valid: ${problem}`)
  }
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
  /** The cohort to write: the body's fields over the existing cohort's, property groups checked against the project. */
  async function toWrite(project: Project, body: CohortBody, existing: Cohort | null): Promise<CohortWrite> {
    const isStatic = body.isStatic ?? existing?.isStatic ?? false
    let filters = existing?.filters ?? null
    if (body.filters != null) {
      const f = body.filters as { properties?: PropertyGroup }
      if (!f.properties || !isPropertyGroup(f.properties)) throw invalid('Filters must be {"properties": {"type": "AND"|"OR", "values": [...]}}')
      const ids = new Set((await store.listLive(project.id)).map((c) => c.id))
      validatePropertyGroup(f.properties, ids)
      filters = { properties: f.properties }
    }
    return {
      name: body.name ?? existing?.name ?? '',
      description: body.description ?? existing?.description ?? '',
      filters: isStatic ? null : filters,
      groups: body.groups ?? existing?.groups ?? [],
      isStatic,
      deleted: body.deleted ?? existing?.deleted ?? false,
    }
  }

  async function addMembers(project: Project, cohort: Cohort, members: { distinctIds?: string[]; personUuids?: string[] }) {
    const distinctIds = members.distinctIds ?? []
    const uuids = members.personUuids ?? []
    if (distinctIds.length === 0 && uuids.length === 0) return
    if (!cohort.isStatic) throw validationError('csv', 'Persons can only be added to static cohorts.', 'invalid_input')
    const personIds = [...(await persons.ensurePersons(project.id, distinctIds)).values()]
    personIds.push(...(await persons.findPersonIdsByUuid(project.id, uuids)))
    await store.addMembers(cohort.id, personIds)
  }

  const membersOf = (body: CohortBody) => ({ distinctIds: [...(body.csv ? distinctIdsFromCsv(body.csv) : []), ...(body.distinctIds ?? [])] })

  async function get(project: Project, id: number): Promise<Cohort> {
    const cohort = Number.isSafeInteger(id) ? await store.get(project.id, id) : null
    if (!cohort) throw new AppError('not_found', 'Not found.')
    return cohort
  }

  return {
    list: (project: Project, page: Page) => store.list(project.id, page),
    get,
    async create(project: Project, user: User, body: CohortBody): Promise<Cohort> {
      const cohort = await store.insert({ projectId: project.id, userId: user.id, cohort: await toWrite(project, body, null) })
      await addMembers(project, cohort, membersOf(body))
      onChange(project.id)
      return get(project, cohort.id)
    },
    async update(project: Project, id: number, body: CohortBody): Promise<Cohort> {
      const existing = await get(project, id)
      const cohort = await store.update({ projectId: project.id, id, cohort: await toWrite(project, body, existing) })
      await addMembers(project, cohort, membersOf(body))
      onChange(project.id)
      return get(project, id)
    },
    /** PostHog's `add_persons_to_static_cohort`: persons by UUID. */
    async addPersons(project: Project, id: number, personUuids: string[]): Promise<Cohort> {
      const cohort = await get(project, id)
      await addMembers(project, cohort, { personUuids })
      onChange(project.id)
      return get(project, id)
    },
  }
}

export type CohortService = ReturnType<typeof createCohortService>
