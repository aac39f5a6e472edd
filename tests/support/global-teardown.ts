/**
 * Preloaded by `bun test` (bunfig.toml): stops the servers that test support starts once per run and shares
 * between files (PostgreSQL, Redis), after the last test file.
 */
import { afterAll } from "bun:test";
import { stopPostgres } from "./postgres";
import { stopRedis } from "./redis";

afterAll(async () => {
  await Promise.all([stopPostgres(), stopRedis()]);
});
