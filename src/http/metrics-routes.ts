import type { FastifyInstance } from 'fastify'
import { Counter, Histogram, type Registry } from 'prom-client'

/**
 * `GET /_metrics` in Prometheus' text format, and the HTTP request metrics behind it: requests by
 * route template (never the raw URL, so keys in paths stay out and label sets stay bounded), method
 * and status, with a latency histogram.
 */
export function installMetrics(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'tally_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'tally_http_request_duration_seconds',
    help: 'Time from request to response, by route template and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched'
    requests.inc({ route, method: req.method, status: String(reply.statusCode) })
    latency.observe({ route, method: req.method }, reply.elapsedTime / 1000)
    done()
  })
  app.get('/_metrics', async (_req, reply) => {
    reply.header('content-type', registry.contentType)
    return registry.metrics()
  })
}
