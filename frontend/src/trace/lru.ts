/** A small least-recently-used map: `get` and `set` refresh an entry; the oldest falls out. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  /** Reads without refreshing. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > Math.max(0, this.capacity)) {
      const oldest = this.map.keys().next().value as K;
      this.map.delete(oldest);
    }
  }

  /** Newest first. */
  values(): V[] {
    return [...this.map.values()].reverse();
  }

  clear(): void {
    this.map.clear();
  }
}
