/**
 * What every Redis-backed store does with its connection: connect on first use (one attempt at a time; the
 * clients run without an offline queue, so a command while Redis is down fails at once instead of waiting), and run
 * Lua scripts by their SHA, loading each on first use, or again after a Redis restart forgot it (NOSCRIPT).
 */
import type { RedisClient } from "bun";

export class RedisScripts {
  private readonly shas = new Map<string, string>();
  private connecting: Promise<void> | null = null;

  constructor(private readonly client: RedisClient) {}

  /** Resolves once connected (at once when already). */
  connected(): Promise<void> {
    if (this.client.connected) return Promise.resolve();
    this.connecting ??= this.client.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Loads a script ahead of its first use, so that use never waits for the load. */
  async load(source: string): Promise<void> {
    await this.connected();
    this.shas.set(source, (await this.client.send("SCRIPT", ["LOAD", source])) as string);
  }

  async run(source: string, keys: string[], args: string[]): Promise<unknown> {
    await this.connected();
    let sha = this.shas.get(source);
    if (!sha) {
      sha = (await this.client.send("SCRIPT", ["LOAD", source])) as string;
      this.shas.set(source, sha);
    }
    try {
      return await this.client.send("EVALSHA", [sha, String(keys.length), ...keys, ...args]);
    } catch (err) {
      if (!String((err as Error).message).includes("NOSCRIPT")) throw err;
      this.shas.delete(source);
      return this.run(source, keys, args);
    }
  }
}
