import pino, { type Logger } from 'pino'

/** The one pino root. Keys and cookies are redacted; events are never logged at info. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: ['req.headers.authorization', 'req.headers.cookie', '*.api_key', '*.personal_api_key', '*.token'],
  })
}
