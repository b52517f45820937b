import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import type { Plan } from '../../domain/query/query-plan.ts'
import type { QueryCohort } from '../../domain/query/filter-expr.ts'
import type { Project } from '../projects/project-types.ts'
import type { Person } from '../persons/person-types.ts'
import type { QueryEngine, QueryRows, RunGuards } from './query-engine.ts'

/** A query node as the client sent it (`{kind, ...}`): each runner reads its own fields. */
export type QueryNode = Record<string, unknown>

/** What a runner answers: the kind's own fields (`results`, `columns`, `hasMore`...); the envelope is added around it. */
export type QueryResult = Record<string, unknown>

/** Everything a runner may use. Runners never see HTTP, SQL or the stores behind these. */
export interface QueryContext {
  project: Project
  /** The project's zone (`timezone` setting, IANA name; default UTC). */
  timeZone: string
  now: Date
  engine: QueryEngine
  guards: RunGuards
  /** Runs a plan on the project's events under the guards. */
  run(plan: Plan): Promise<QueryRows>
  /** An action's name and steps; a 400 naming `attr` when the project has no such action. */
  action(id: number, attr: string): Promise<{ name: string; steps: readonly ActionStepDefinition[] }>
  /** A cohort; a 400 naming `attr` when the project has no such cohort. */
  cohort(id: number, attr: string): Promise<QueryCohort>
  /** Each group of the type with its value of the property (a 400 naming `attr` when there are too many). */
  groupValues(typeIndex: number, key: string, attr: string): Promise<Array<[string, string]>>
  /** The persons of these uuids (with all their distinct ids), read in batches; absent ones are left out. */
  persons(uuids: readonly string[]): Promise<Person[]>
  /** The groups of a type with these keys (properties and creation time), read in batches; absent ones are left out. */
  groups(typeIndex: number, keys: readonly string[]): Promise<ActorGroup[]>
}

/** A group as an actors query shows it. */
export interface ActorGroup {
  typeIndex: number
  key: string
  properties: Record<string, unknown>
  createdAt: Date
}

/** Computes one query kind. Throws `AppError` (`validation_error` naming the field) on bad input. */
export type QueryRunner = (ctx: QueryContext, query: QueryNode) => Promise<QueryResult>
