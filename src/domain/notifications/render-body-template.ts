/**
 * A destination's body: JSON text with placeholders, as PostHog's webhook destination template
 * writes them: `{event}` (the whole event), `{event.uuid}`, `{event.event}`, `{event.distinct_id}`,
 * `{event.timestamp}`, `{event.properties.KEY}`, `{person}`, `{person.properties.KEY}`,
 * `{project.name}`... A placeholder standing as a JSON value (`{"e": {event}}`) becomes the value as
 * JSON (an object, a number, `null` when missing); inside a JSON string (`"id {event.uuid}"`) it
 * becomes text. The result is checked to be JSON.
 */
export const DEFAULT_BODY_TEMPLATE = '{"event": {event}, "person": {person}}'

export interface TemplateGlobals {
  event: Record<string, unknown>
  person: Record<string, unknown>
  project: Record<string, unknown>
}

const PLACEHOLDER = /^\{((?:event|person|project)(?:\.[^{}"\\]+)?)\}/

/** Renders `template`; throws an Error naming the problem when the result is not JSON. */
export function renderBodyTemplate(template: string, globals: TemplateGlobals): string {
  let out = ''
  let inString = false
  for (let i = 0; i < template.length; i++) {
    const ch = template[i]!
    if (inString && ch === '\\') {
      out += ch + (template[i + 1] ?? '')
      i++
      continue
    }
    if (ch === '"') inString = !inString
    if (ch === '{') {
      const m = PLACEHOLDER.exec(template.slice(i))
      if (m) {
        const value = lookup(globals, m[1]!.split('.'))
        out += inString ? JSON.stringify(asText(value)).slice(1, -1) : JSON.stringify(value ?? null)
        i += m[0].length - 1
        continue
      }
    }
    out += ch
  }
  try {
    JSON.parse(out)
  } catch (err) {
    throw new Error(`the body template does not give JSON: ${(err as Error).message}`)
  }
  return out
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined || value === null) return ''
  return JSON.stringify(value)
}

function lookup(globals: TemplateGlobals, path: string[]): unknown {
  let current: unknown = globals
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}
