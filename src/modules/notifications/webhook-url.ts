import { readString } from '../../http/drf-fields.ts'
import { validationError } from '../../shared/errors.ts'

/** An outgoing webhook's URL as a body field: http(s) only; blank or null clears it when `allowNull`. */
export function readWebhookUrl(v: unknown, attr: string, opts: { allowNull?: boolean } = { allowNull: true }): string | null {
  const text = readString(v, attr, { allowNull: opts.allowNull, allowBlank: opts.allowNull, maxLength: 2000 })
  if (text === null || text === '') return null
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw validationError(attr, 'Enter a valid URL.', 'invalid')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError(attr, 'The URL must start with http:// or https://.', 'invalid')
  return url.toString()
}
