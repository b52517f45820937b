import { AppError } from '../../shared/errors.ts'

// posthog-js (before gzip-js) sent `?compression=lz64`: LZString's `compressToBase64`. This is the
// library's `decompressFromBase64`, rewritten only to stop once the output passes `maxChars`:
// LZ78-style codes can expand quadratically, so an unbounded decoder is a decompression bomb.

const KEY = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='
const VALUE: Record<string, number> = Object.fromEntries([...KEY].map((ch, i) => [ch, i]))

/**
 * The text packed by LZString `compressToBase64`, or null when `input` is not a valid stream
 * (LZString answers `""`/`null` there). Throws AppError('payload_too_large') past `maxChars`.
 */
export function decompressLz64(input: string, maxChars: number): string | null {
  if (input === '') return null
  const reader = createBitReader(input)
  const dictionary: string[] = ['', '', '']
  let enlargeIn = 4
  let numBits = 3
  let outLength = 0
  const result: string[] = []

  const head = reader.read(2)
  if (head === 2) return ''
  if (head === 3) return null
  const first = String.fromCharCode(reader.read(head === 0 ? 8 : 16))
  dictionary[3] = first
  let dictSize = 4
  let w = first
  result.push(first)
  outLength += first.length

  for (;;) {
    if (reader.exhausted()) return null
    let code = reader.read(numBits)
    if (code === 2) return result.join('')
    if (code === 0 || code === 1) {
      dictionary[dictSize++] = String.fromCharCode(reader.read(code === 0 ? 8 : 16))
      code = dictSize - 1
      enlargeIn--
      if (enlargeIn === 0) enlargeIn = 2 ** numBits++
    }
    let entry: string
    if (dictionary[code]) entry = dictionary[code]!
    else if (code === dictSize) entry = w + w.charAt(0)
    else return null
    outLength += entry.length
    if (outLength > maxChars) throw new AppError('payload_too_large', 'Decompressed lz64 payload is too large.')
    result.push(entry)
    dictionary[dictSize++] = w + entry.charAt(0)
    enlargeIn--
    w = entry
    if (enlargeIn === 0) enlargeIn = 2 ** numBits++
  }
}

interface BitReader {
  read(bits: number): number
  exhausted(): boolean
}

function createBitReader(input: string): BitReader {
  const resetValue = 32
  let val = VALUE[input.charAt(0)] ?? 0
  let position = resetValue
  let index = 1
  return {
    read(bits: number): number {
      let out = 0
      for (let power = 1; power !== 1 << bits; power <<= 1) {
        const bit = val & position
        position >>= 1
        if (position === 0) {
          position = resetValue
          val = VALUE[input.charAt(index++)] ?? 0
        }
        if (bit > 0) out |= power
      }
      return out
    },
    exhausted: () => index > input.length,
  }
}
