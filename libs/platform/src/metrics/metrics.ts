import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The Prometheus metrics of one process, served at `/metrics`. One instance per process (tests
 * create their own), so nothing registers twice.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'hearth_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly sseConnections = new Gauge({
    name: 'hearth_sse_connections',
    help: 'Open server-sent event streams',
    labelNames: ['stream'] as const,
    registers: [this.registry],
  });

  /** Request-body bytes held by the API's body readers right now (HTTP_BODY_BUFFER_BUDGET_BYTES bounds it). */
  readonly httpBodyBufferBytes = new Gauge({
    name: 'hearth_http_body_buffer_bytes',
    help: 'Request-body bytes reserved by body readers that are still reading or parsing',
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'hearth_job_duration_seconds',
    help: 'Job processing time by job name and outcome',
    labelNames: ['name', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });

  readonly jobsTotal = new Counter({
    name: 'hearth_jobs_total',
    help: 'Jobs processed by job name and outcome',
    labelNames: ['name', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'hearth_queue_depth',
    help: 'Job records by status that are not finished yet',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'hearth_' });
  }
}
