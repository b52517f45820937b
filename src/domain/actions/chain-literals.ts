import type { ActionStepDefinition } from './match-action.ts'
import { parseSelector } from './match-selector.ts'

/**
 * Texts that an event's raw `elements_chain` must contain for the step's element constraints
 * (`tag_name`, `text`, `href`, `selector`) to hold: a cheap substring test a store can run before
 * parsing the chain. Necessary, never sufficient: an empty list means "no cheap test".
 *
 * Why they are necessary: the parser keeps the tag and class parts verbatim and takes each value
 * verbatim except `\"`, which becomes `"`. So a parsed value, cut at its `"` characters, has each
 * piece verbatim in the chain; the longest piece is used. A LIKE pattern (`contains`) contributes
 * its longest literal run between `%`, `_` and `"`. Regexes contribute nothing.
 */
export function requiredChainLiterals(step: ActionStepDefinition): string[] {
  const out: string[] = []
  if (step.tag_name) out.push(step.tag_name)
  for (const [value, matching] of [[step.text, step.text_matching], [step.href, step.href_matching]] as const) {
    if (!value) continue
    const mode = matching ?? 'exact'
    if (mode === 'exact') out.push(longestPiece(value, /"/))
    else if (mode === 'contains') out.push(longestPiece(value, /[%_"]/))
  }
  if (step.selector) {
    for (const { requirements: r } of parseSelector(step.selector)) {
      if (r.tag_name) out.push(r.tag_name)
      for (const cls of r.attr_class ?? []) out.push(cls)
      for (const value of [r.attr_id, r.href]) if (value) out.push(longestPiece(value, /"/))
      for (const [name, value] of Object.entries(r.attributes ?? {})) out.push(longestPiece(`attr__${name}`, /"/), longestPiece(value, /"/))
    }
  }
  return [...new Set(out.filter((s) => s !== ''))]
}

function longestPiece(text: string, separators: RegExp): string {
  return text.split(separators).reduce((best, piece) => (piece.length > best.length ? piece : best), '')
}
