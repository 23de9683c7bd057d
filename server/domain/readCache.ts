/**
 * A short-lived read cache for hot public reads (the open-task listing): each distinct query is computed at most
 * once per `ttlMs`, concurrent requests share one computation, and a stale answer is served while one refresh runs.
 * Writes in this process (a new listing) clear it; other processes see changes within `ttlMs`.
 */
export class ReadCache<T> {
  private readonly entries = new Map<string, { value?: T; at: number; pending?: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1000,
  ) {}

  async get(key: string, compute: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const entry = this.entries.get(key);
    if (entry && entry.value !== undefined && now - entry.at < this.ttlMs) return entry.value;
    if (entry?.pending) return entry.value ?? entry.pending;
    const pending = compute().then(
      (value) => {
        this.entries.set(key, { value, at: Date.now() });
        return value;
      },
      (error) => {
        const current = this.entries.get(key);
        if (current?.pending === pending) {
          if (current.value === undefined) this.entries.delete(key);
          else current.pending = undefined;
        }
        throw error;
      },
    );
    if (this.entries.size >= this.maxEntries && !entry) this.entries.clear();
    this.entries.set(key, { value: entry?.value, at: entry?.at ?? 0, pending });
    return entry?.value ?? pending;
  }

  clear(): void {
    this.entries.clear();
  }
}

/**
 * A result already serialized to JSON (a cached hot read): the router sends it inside the envelope as is, instead of
 * serializing the same object for every request.
 */
export class SerializedData {
  private bytes?: Buffer;

  constructor(readonly json: string) {}

  /** The whole success envelope as UTF-8, encoded once: a hot page is sent without re-encoding or re-measuring it. */
  get envelope(): Buffer {
    return (this.bytes ??= Buffer.from(`{"success":true,"data":${this.json}}`));
  }
}
