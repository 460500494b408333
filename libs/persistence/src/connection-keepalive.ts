/**
 * TCP keep-alive on every Postgres connection the service keeps open (the pool's, the statement
 * pipeline's, each LISTEN): a probe after each minute of silence keeps a firewall, NAT or load
 * balancer between the service and Postgres (idle limits of a few minutes are common) from dropping a
 * connection that waits, and a server that went away is found by the probes rather than by the next
 * statement. The operating system's default is two hours, longer than any such limit.
 */
export const CONNECTION_KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 60_000 } as const;
