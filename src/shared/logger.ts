import pino, { type Logger } from 'pino'
import pretty from 'pino-pretty'

/** API keys as they appear in URLs, headers or text: project (`phc_`) and personal (`phx_`) keys. */
const API_KEY = /\bph[cx]_[A-Za-z0-9_-]+/g

/** One-time link tokens in a query string (`/api/setup/?token=`, `/api/signup/invite/?token=`). */
const LINK_TOKEN = /([?&](?:token|invite)=)(?!ph[cx]_)[^&#]+/g

/** Replaces every API key and one-time link token in a text (a URL, a message) with `[redacted]`. */
export function redactKeys(text: string): string {
  const keysHidden = text.replace(API_KEY, (key) => `${key.slice(0, 4)}[redacted]`)
  return keysHidden.includes('=') ? keysHidden.replace(LINK_TOKEN, '$1[redacted]') : keysHidden
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
