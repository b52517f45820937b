import pino, { type Logger } from 'pino'
import pretty from 'pino-pretty'

/** API keys as they appear in URLs, headers or text: project (`phc_`) and personal (`phx_`) keys. */
const API_KEY = /\bph[cx]_[A-Za-z0-9_-]+/g

/** Replaces every API key in a text (a URL, a message) with its prefix and `[redacted]`. */
export function redactKeys(text: string): string {
  return text.replace(API_KEY, (key) => `${key.slice(0, 4)}[redacted]`)
}

export interface LoggerOptions {
  level: string
  /** Readable lines instead of JSON (for a terminal); request ids and levels in both. */
  pretty: boolean
  /** Where lines go (default stdout). */
  destination?: NodeJS.WritableStream
}

/**
 * The one pino root. Authorization headers, cookies and API-key fields are redacted (URLs are
 * redacted where they are logged, see http/request-logging.ts); events are never logged at info.
 */
export function createLogger(opts: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level: opts.level,
    redact: [
      'req.headers.authorization',
      'req.headers.cookie',
      'headers.authorization',
      'headers.cookie',
      '*.api_key',
      '*.personal_api_key',
      '*.token',
      '*.projectApiKey',
      '*.personalApiKey',
    ],
  }
  if (!opts.pretty) return opts.destination ? pino(options, opts.destination) : pino(options)
  const colorize = !opts.destination
  return pino(options, pretty({ sync: true, colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: opts.destination }))
}
