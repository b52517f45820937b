import type { PropertyBag, PropertyFilter } from '../properties/property-filter.ts'
import { compilePropertyFilter, type PropertyMatcher } from '../properties/match-property.ts'
import { parseElementsChain, type ParsedElement } from './parse-elements-chain.ts'
import { matchSelector, parseSelector } from './match-selector.ts'
import { planStringMatch, testStringMatch, type StringMatchPlan } from './string-match.ts'

/** The fields of an action step the matcher reads (the stored step has more). */
export interface ActionStepDefinition {
  event?: string | null
  url?: string | null
  url_matching?: string | null
  text?: string | null
  text_matching?: string | null
  href?: string | null
  href_matching?: string | null
  selector?: string | null
  tag_name?: string | null
  properties?: readonly PropertyFilter[] | null
}

/** What the matcher sees of an event. `personProperties` is optional: events do not carry them yet. */
export interface ActionEvent {
  event: string
  properties: PropertyBag
  elementsChain: string
  /** The person's properties, for `type: "person"` filters; absent reads as an empty bag. */
  personProperties?: PropertyBag | null
}

/** A compiled action: true when the event matches any step. `now` (epoch ms) is for date filters. */
export type ActionMatcher = (event: ActionEvent, now: number) => boolean

/** Element fields a `type: "element"` filter can name besides `selector`. */
export const ELEMENT_FILTER_KEYS = ['tag_name', 'text', 'href', 'attr_id', 'nth_child', 'nth_of_type'] as const
export type ElementFilterKey = (typeof ELEMENT_FILTER_KEYS)[number]

/**
 * Per-event state: the chain is parsed at most once, and only when a step needs it. A class, not an
 * object with a closure: a matcher runs for every event of a micro-batch and every action.
 */
class Input {
  private parsed: ParsedElement[] | undefined
  constructor(
    readonly event: ActionEvent,
    readonly now: number,
  ) {}
  elements(): ParsedElement[] {
    return (this.parsed ??= parseElementsChain(this.event.elementsChain))
  }
}
type Check = (input: Input) => boolean

/**
 * Compiles action steps once (regexes, selectors, property matchers) into a pure, synchronous
 * matcher with PostHog's semantics (plugin-server's `action-matcher.ts`, reference section 4):
 * - OR across steps, AND within a step; no steps matches nothing (the Node matcher's answer);
 * - `event`: exact name; `url`: `properties.$current_url` must be a non-empty string, compared
 *   with `url_matching` (default contains, a case-sensitive LIKE);
 * - `tag_name`, `text`, `href`: one element must satisfy all that are set (text/href with their
 *   `*_matching`, default exact, against '' when the element has none); `selector`: see
 *   {@link matchSelector}. These apply whatever the event's name (HogQL applies them only to
 *   `$autocapture` steps; a step with element fields on another event is rare either way);
 * - `properties`, all must match, through the flags' property matcher ({@link compilePropertyFilter}):
 *   `event` (or no type) against the event's properties, `person` against `personProperties`
 *   (an empty bag when absent, so only the operators that match a missing key pass), `element`
 *   with key `selector` (any of its values) or one of {@link ELEMENT_FILTER_KEYS} against each
 *   element (any), `cohort` with value `"all"` matches; any other type matches nothing.
 */
export function compileAction(steps: readonly ActionStepDefinition[]): ActionMatcher {
  const compiled = steps.map(compileStep)
  // When every step names its event, an event of another name matches none: answered before any
  // per-event state is made (most events of a batch, for most actions).
  const names = steps.length > 0 && steps.every((s) => s.event) ? new Set(steps.map((s) => s.event!)) : null
  return (event, now) => {
    if (names !== null && !names.has(event.event)) return false
    const input = new Input(event, now)
    return compiled.some((check) => check(input))
  }
}

function compileStep(step: ActionStepDefinition): Check {
  const checks: Check[] = []
  // The event's name first: the cheapest check, and most events fail it without their properties read.
  if (step.event) {
    const name = step.event
    checks.push(({ event }) => event.event === name)
  }
  if (step.url) checks.push(compileUrl(planStringMatch(step.url, step.url_matching, 'contains')))
  if (step.href || step.tag_name || step.text) checks.push(compileElementFields(step))
  if (step.selector) {
    const parts = parseSelector(step.selector)
    checks.push((input) => matchSelector(parts, input.elements()))
  }
  for (const filter of stepFilters(step)) checks.push(compileStepFilter(filter))
  return (input) => checks.every((check) => check(input))
}

function compileUrl(plan: StringMatchPlan): Check {
  return ({ event }) => {
    const url = event.properties.$current_url
    return typeof url === 'string' && url !== '' && testStringMatch(plan, url)
  }
}

function compileElementFields(step: ActionStepDefinition): Check {
  const href = step.href ? planStringMatch(step.href, step.href_matching, 'exact') : null
  const text = step.text ? planStringMatch(step.text, step.text_matching, 'exact') : null
  const tag = step.tag_name || null
  const matches = (el: ParsedElement): boolean =>
    (href === null || testStringMatch(href, el.href ?? '')) &&
    (tag === null || el.tag_name === tag) &&
    (text === null || testStringMatch(text, el.text ?? ''))
  return (input) => input.elements().some(matches)
}

function compileStepFilter(filter: PropertyFilter): Check {
  if (!isUsableFilter(filter)) return () => false
  const type = filter.type ?? 'event'
  if (type === 'event') {
    const match = compilePropertyFilter(filter)
    return ({ event, now }) => match(event.properties, now)
  }
  if (type === 'person') {
    const match = compilePropertyFilter(filter)
    return ({ event, now }) => match(event.personProperties ?? {}, now)
  }
  if (type === 'element') return compileElementFilter(filter)
  if (type === 'cohort') return filter.value === 'all' ? () => true : () => false
  return () => false
}

function compileElementFilter(filter: PropertyFilter): Check {
  if (filter.key === 'selector') {
    const values = Array.isArray(filter.value) ? filter.value : [filter.value]
    const selectors = values.filter((v) => Boolean(v)).map((v) => parseSelector(String(v)))
    return (input) => selectors.some((parts) => matchSelector(parts, input.elements()))
  }
  if (!isElementFilterKey(filter.key)) return () => false
  const key = filter.key
  const match: PropertyMatcher = compilePropertyFilter(filter)
  return (input) => input.elements().some((el) => match(elementBag(el, key), input.now))
}

/** A step's property filters; anything but a list (stored data is the user's) reads as none. */
export function stepFilters(step: ActionStepDefinition): readonly PropertyFilter[] {
  return Array.isArray(step.properties) ? step.properties : []
}

/** Stored steps come from users: a filter that is not an object with a string key matches nothing. */
export function isUsableFilter(filter: unknown): filter is PropertyFilter {
  return typeof filter === 'object' && filter !== null && typeof (filter as PropertyFilter).key === 'string'
}

export function isElementFilterKey(key: string): key is ElementFilterKey {
  return (ELEMENT_FILTER_KEYS as readonly string[]).includes(key)
}

function elementBag(el: ParsedElement, key: ElementFilterKey): PropertyBag {
  const value = el[key]
  return value === undefined ? {} : { [key]: value }
}
