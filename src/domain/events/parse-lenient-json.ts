/**
 * JSON.parse, except that bare `NaN`, `Infinity` and `-Infinity` (which Python's json module writes
 * by default) read as null, as Django's capture did. The fallback only runs when JSON.parse fails,
 * so well-formed bodies pay nothing. Throws the JSON.parse error when the text is still invalid.
 */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    const repaired = replaceNonFiniteLiterals(text)
    if (repaired === text) throw err
    return JSON.parse(repaired)
  }
}

/** Replaces NaN/Infinity/-Infinity tokens outside string literals with `null`. */
export function replaceNonFiniteLiterals(text: string): string {
  let out = ''
  let last = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    if (inString) {
      if (ch === 0x5c) i++ // backslash: skip the escaped character
      else if (ch === 0x22) inString = false
      continue
    }
    if (ch === 0x22) {
      inString = true
      continue
    }
    const token = matchToken(text, i)
    if (token > 0) {
      out += text.slice(last, i) + 'null'
      i += token - 1
      last = i + 1
    }
  }
  return last === 0 ? text : out + text.slice(last)
}

function matchToken(text: string, i: number): number {
  if (text.startsWith('NaN', i)) return 3
  if (text.startsWith('Infinity', i)) return 8
  if (text.startsWith('-Infinity', i)) return 9
  return 0
}
