/**
 * The HAProxy configuration of the local cluster (design §8.32): HTTP mode
 * (WebSocket upgrades pass through and stay open under `timeout tunnel`), round robin without
 * sticky sessions, health checks on `/readyz` (a draining or disconnected instance leaves the
 * rotation), `X-Forwarded-For` with the client's address (the instances trust it from the
 * balancer's host: `TRUST_PROXY`, set by run.ts) and `X-Parley-Instance` naming the instance that answered.
 */

export interface Backend {
  name: string;
  host: string;
  port: number;
}

/** `haproxy.cfg` text for a frontend on `host:port` over `backends`. */
export function haproxyConfig(o: { host: string; port: number; backends: Backend[] }): string {
  return [
    'global',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 90s',
    '  timeout server 90s',
    '  timeout tunnel 1h',
    '  timeout http-keep-alive 10s',
    '  option redispatch',
    '  option forwardfor',
    '  retries 2',
    '',
    'frontend parley',
    `  bind ${o.host}:${o.port}`,
    '  default_backend instances',
    '',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  http-response set-header X-Parley-Instance %s',
    ...o.backends.map((b) => `  server ${b.name} ${b.host}:${b.port} check inter 1s fall 2 rise 1`),
    '',
  ].join('\n');
}
