// What is derived from an object that never changes, built on first use and kept as long as the
// object lives (a WeakMap: the object's going frees it).

/** `cache`'s value for `key`, built by `build` the first time. */
export function derived<K extends object, V>(
  cache: WeakMap<K, V>,
  key: K,
  build: (key: K) => V,
): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = build(key);
    cache.set(key, value);
  }
  return value;
}
