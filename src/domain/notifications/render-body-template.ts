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

/** A placeholder's path, and whether it stands inside a JSON string (text) or as a value. */
type Part = string | { path: string[]; inString: boolean }

/** A template compiled once: renders a body per event without scanning or re-checking the template. */
export type BodyRenderer = (globals: TemplateGlobals) => string

/**
 * Compiles `template`; throws an Error naming the problem when it does not give JSON. The check is
 * made once, with every value placeholder as `null` and every text one empty: a value placeholder
 * becomes one whole JSON value and a text one escaped text, so a template that gives JSON then gives
 * JSON for any event.
 */
export function compileBodyTemplate(template: string): BodyRenderer {
  const parts: Part[] = []
  let text = ''
  let inString = false
  for (let i = 0; i < template.length; i++) {
    const ch = template[i]!
    if (inString && ch === '\\') {
      text += ch + (template[i + 1] ?? '')
      i++
      continue
    }
    if (ch === '"') inString = !inString
    if (ch === '{') {
      const m = PLACEHOLDER.exec(template.slice(i))
      if (m) {
        parts.push(text, { path: m[1]!.split('.'), inString })
        text = ''
        i += m[0].length - 1
        continue
      }
    }
    text += ch
  }
  parts.push(text)
  const render: BodyRenderer = (globals) => {
    let out = ''
    for (const part of parts) {
      if (typeof part === 'string') out += part
      else {
        const value = lookup(globals, part.path)
        out += part.inString ? JSON.stringify(asText(value)).slice(1, -1) : JSON.stringify(value ?? null)
      }
    }
    return out
  }
  try {
    JSON.parse(render({ event: {}, person: {}, project: {} }))
  } catch (err) {
    throw new Error(`the body template does not give JSON: ${(err as Error).message}`)
  }
  return render
}

/** Renders `template` once; throws an Error naming the problem when the result is not JSON. */
export function renderBodyTemplate(template: string, globals: TemplateGlobals): string {
  return compileBodyTemplate(template)(globals)
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
