/**
 * The principal resolver of an app or a live channel, built from its dependencies: the
 * bootstrap keys plus the process's shared managed-key cache (one per Redis connection and
 * prefix, so the HTTP routes, the live channel and the queue UI see one revocation at once).
 */
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { RedisConnection } from '@flowline/queue';
import { createPrincipalResolver, type ApiKeyTable, type PrincipalResolver } from '../auth';
import { sharedManagedKeys, type ManagedKeyOptions } from './managed-keys';

/** What {@link principalResolverFor} reads. */
export interface PrincipalDeps {
  apiKeys: ApiKeyTable | null;
  managedKeys?: ManagedKeyOptions;
  pool: Pool;
  redis: RedisConnection;
  queuePrefix: string;
  logger: Logger;
}

/** Bootstrap keys, and managed keys when API_KEYS is set and a pepper is configured. */
export function principalResolverFor(d: PrincipalDeps): PrincipalResolver {
  const managed = d.apiKeys !== null && d.managedKeys?.pepper ? sharedManagedKeys(d, d.managedKeys) : null;
  return createPrincipalResolver(d.apiKeys, managed, d.managedKeys?.trustedProxies ?? []);
}
