import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { Agent } from 'undici'
import { isInternalAddress, plainAddress } from '../../shared/internal-addresses.ts'

/**
 * Outgoing webhooks that cannot be pointed at the server's own network. Every address a request
 * connects to, after DNS and after each redirect, is checked at connect time (in the socket's DNS
 * look-up, so a name that resolves to a public address when checked and a private one when
 * connecting cannot slip through): loopback, private, link-local (the cloud metadata service at
 * 169.254.169.254 among them), shared, multicast and unspecified ranges, IPv4 and IPv6, are refused
 * unless the operator's allow-list names them.
 */
export interface WebhookClient {
  post(url: string, body: string, headers: Record<string, string>): Promise<WebhookResponse>
  /** Closes the kept-alive connections. */
  close(): Promise<void>
}

export interface WebhookResponse {
  status: number
}

/** Thrown for a URL the client will not send to; never retried. */
export class WebhookRefusedError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WebhookRefusedError'
  }
}

export interface WebhookClientOptions {
  /** `TALLY_WEBHOOK_ALLOW`: IPs and CIDRs (`127.0.0.1`, `10.0.0.0/8`, `::1`) that may be reached anyway. */
  allow: readonly string[]
  timeoutMs: number
  maxRedirects?: number
  /** Kept-alive connections per origin (the sender's per-channel concurrency). */
  connectionsPerOrigin?: number
}

/** Builds the allow-list from its text form; throws on an entry that is neither an IP nor a CIDR. */
export function parseAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const raw of entries) {
    const entry = raw.trim()
    if (!entry) continue
    const [addr, bits] = entry.split('/')
    const family = isIP(addr!)
    if (family === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) throw new Error(`not an IP address or CIDR: ${entry}`)
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (bits === undefined) list.addAddress(addr!, type)
    else list.addSubnet(addr!, Number(bits), type)
  }
  return list
}

/** Why an address may not be reached, or null when it may. IPv4-mapped IPv6 is judged as IPv4. */
export function refusalOf(address: string, allow: BlockList): string | null {
  const plain = plainAddress(address)
  if (plain !== null && allow.check(plain.address, plain.type)) return null
  return isInternalAddress(address) ? `address ${address} is internal (loopback, private, link-local or reserved)` : null
}

export function createWebhookClient(options: WebhookClientOptions): WebhookClient {
  const allow = parseAllowList(options.allow)
  const maxRedirects = options.maxRedirects ?? 3

  // The socket's look-up: every address it would connect to must pass.
  const guardedLookup = (hostname: string, opts: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, '')
      const list = addresses as LookupAddress[]
      const refused = list.map((a) => refusalOf(a.address, allow)).find((r) => r !== null)
      if (refused) return callback(new WebhookRefusedError(`${hostname}: ${refused}`), '')
      if ((opts as { all?: boolean }).all) return callback(null, list)
      callback(null, list[0]!.address, list[0]!.family)
    })
  }

  // Kept-alive connections per origin (a destination's endpoint), at most as many as the sender
  // sends at once to it; undici's time-outs run on its shared timer, not one timer per request.
  const dispatcher = new Agent({
    connections: options.connectionsPerOrigin ?? 16,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { lookup: guardedLookup as never, timeout: options.timeoutMs },
  })

  /** What a URL's text gives: the URL, and why it may not be reached before any look-up (or null). */
  const judged = new Map<string, { url: URL; origin: string; path: string; refused: string | null }>()
  function judge(text: string | URL): { url: URL; origin: string; path: string; refused: string | null } {
    const key = String(text)
    let j = judged.get(key)
    if (!j) {
      const url = new URL(key)
      let refused: string | null = null
      if (url.protocol !== 'http:' && url.protocol !== 'https:') refused = `scheme ${url.protocol} is not http or https`
      else {
        // A literal address skips the look-up: judge it here.
        const host = url.hostname.replace(/^\[|\]$/g, '')
        if (isIP(host)) refused = refusalOf(host, allow)
      }
      if (judged.size >= 1000) judged.clear()
      judged.set(key, (j = { url, origin: url.origin, path: url.pathname + url.search, refused }))
    }
    return j
  }

  async function once(target: string | URL, body: string, headers: Record<string, string>): Promise<{ status: number; location: string | null }> {
    const { origin, path, refused } = judge(target)
    if (refused) throw new WebhookRefusedError(refused)
    // undici's dispatch with a handler of its own: the answer's status and Location are all it keeps
    // (no response stream per message); its body is read and dropped.
    return new Promise((resolve, reject) => {
      let status = 0
      let location: string | null = null
      dispatcher.dispatch(
        { origin, path, method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'Tally-Webhooks', ...headers }, body },
        {
          onRequestStart() {},
          onResponseStart(_controller, statusCode, responseHeaders) {
            if (statusCode < 200) return
            status = statusCode
            const l = responseHeaders.location
            location = (Array.isArray(l) ? l[0] : l) ?? null
          },
          onResponseData() {},
          onResponseEnd() {
            resolve({ status, location })
          },
          onResponseError(_controller, err) {
            reject(plainError(err, options.timeoutMs))
          },
        },
      )
    })
  }

  return {
    async post(url, body, headers) {
      let target: string | URL = url
      for (let hop = 0; ; hop++) {
        const res = await once(target, body, headers)
        const redirect = res.status >= 300 && res.status < 400 && res.location
        if (!redirect) return { status: res.status }
        if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects`)
        // Each hop goes through the same checks.
        target = new URL(res.location!, judge(target).url)
      }
    },
    close: () => dispatcher.close(),
  }
}

/** The refusal from the look-up as it was thrown; undici's time-outs in the words the deliveries show. */
function plainError(err: unknown, timeoutMs: number): unknown {
  if (err instanceof WebhookRefusedError) return err
  const cause = (err as { cause?: unknown }).cause
  if (cause instanceof WebhookRefusedError) return cause
  const code = (err as { code?: string }).code
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return new Error(`no answer within ${timeoutMs} ms`)
  return err
}
