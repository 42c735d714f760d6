/**
 * The HTTP endpoint of `schedule --metrics-port`: `/metrics` in Prometheus' text format, `/healthz` (200 while the
 * process serves), and `/readyz` (200 once a probe of the upstream passed, 503 with the reason before). Nothing else
 * is served, and only GET and HEAD are answered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExportMetrics } from './metrics.ts';

/** Whether the process is ready, and why not when it is not. */
export interface Readiness {
  readonly ready: boolean;
  readonly why: string;
}

/** A running metrics endpoint. */
export interface MetricsServer {
  /** `http://host:port`, with the port bound (an ephemeral one when 0 was asked for). */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `metrics` on `host:port`; resolves once listening, rejects when the port cannot be bound. */
export async function serveMetrics(opts: {
  readonly host: string;
  readonly port: number;
  readonly metrics: ExportMetrics;
  readonly readiness: () => Readiness;
}): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(405, 'text/plain; charset=utf-8', 'only GET and HEAD are served\n');
    }
    if (path === '/healthz') return send(200, 'text/plain; charset=utf-8', 'ok\n');
    if (path === '/readyz') {
      const r = opts.readiness();
      return send(r.ready ? 200 : 503, 'text/plain; charset=utf-8', `${r.ready ? 'ready' : `not ready: ${r.why}`}\n`);
    }
    if (path === '/metrics')
      return void opts.metrics.text().then(
        (text) => send(200, opts.metrics.registry.contentType, text),
        (e: Error) => send(500, 'text/plain; charset=utf-8', `metrics could not be collected: ${e.message}\n`),
      );
    send(404, 'text/plain; charset=utf-8', 'not found: /metrics, /healthz and /readyz are served\n');
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
