/**
 * Changes made by another process (the CLI) on the running server's database file. The server notices them
 * through a counter it reads at most every GENERATION_POLL_MS, so a test must wait for the change to show,
 * and may check how soon it did.
 */
import { expect } from "bun:test";
import { GENERATION_POLL_MS } from "../../src/store/sqlite/generation-stamp";
import { pollUntil } from "./poll";

/**
 * How soon after the other process exited its change must be served: the promised GENERATION_POLL_MS plus
 * room for the poll's own requests on a loaded 2-core machine. Far below what a server that stopped reading
 * the counter (never) or read it lazily (seconds) would take; the exact 0.1 s is pinned on an injected clock
 * in tests/unit/generation-stamp.test.ts.
 */
export const SEEN_WITHIN_MS = GENERATION_POLL_MS + 400;

/** Asks `probe` until `done` accepts its answer (another process's change is served) and checks it took less than SEEN_WITHIN_MS. */
export async function seenFromAnotherProcess<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const { value, elapsedMs } = await pollUntil(probe, done, { what });
  expect(elapsedMs).toBeLessThan(SEEN_WITHIN_MS);
  return value;
}
