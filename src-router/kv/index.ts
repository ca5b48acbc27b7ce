import { EmbeddedKeySpace, type EmbeddedKeySpaceOptions } from './embedded-keyspace';
import { RedisKeySpace, type RedisKeySpaceOptions } from './redis-keyspace';

export { EmbeddedKeySpace, type EmbeddedKeySpaceOptions } from './embedded-keyspace';
export { KEYSPACE_VALUE_LIMIT, type KeySpace, KeySpaceError, KeySpaceValueTooLarge } from './keyspace';
export { backoffDelayMs, RedisKeySpace, type RedisKeySpaceOptions, redactRedisUrl } from './redis-keyspace';
export { normalizeTtlMs } from './ttl';

/** Redis when a URL is given (`redis.url` in the node config), the embedded keyspace otherwise. */
export function createKeySpace(
  redisUrl?: string,
  opts: { redis?: RedisKeySpaceOptions; embedded?: EmbeddedKeySpaceOptions } = {},
): EmbeddedKeySpace | RedisKeySpace {
  const url = redisUrl?.trim();
  return url ? new RedisKeySpace(url, opts.redis) : new EmbeddedKeySpace(opts.embedded);
}
