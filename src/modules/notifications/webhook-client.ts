import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP } from 'node:net'
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

  function once(url: URL, body: string, headers: Record<string, string>): Promise<{ status: number; location: string | null }> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new WebhookRefusedError(`scheme ${url.protocol} is not http or https`))
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host)) {
      // A literal address skips the look-up: judge it here.
      const refused = refusalOf(host, allow)
      if (refused) return Promise.reject(new WebhookRefusedError(refused))
    }
    const transport = url.protocol === 'https:' ? https : http
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'Tally-Webhooks', ...headers, 'content-length': Buffer.byteLength(body) },
          lookup: guardedLookup as never,
          timeout: options.timeoutMs,
        },
        (res) => {
          res.resume()
          res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null }))
          res.on('error', reject)
        },
      )
      req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)))
      req.on('error', reject)
      req.end(body)
    })
  }

  return {
    async post(url, body, headers) {
      let target = new URL(url)
      for (let hop = 0; ; hop++) {
        const res = await once(target, body, headers)
        const redirect = res.status >= 300 && res.status < 400 && res.location
        if (!redirect) return { status: res.status }
        if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects`)
        // Each hop goes through the same checks.
        target = new URL(res.location!, target)
      }
    },
  }
}
