/**
 * Changes made by another process (the CLI) on the running server's database file. The server notices them
 * through the change feed, which reads a counter at most every VERSION_POLL_MS, so a test must wait for the change to show,
 * and may check how soon it did.
 */
import { expect } from "bun:test";
import { VERSION_POLL_MS } from "../../src/store/sqlite/change-feed";
import { pollUntil } from "./poll";

/**
 * How soon after the other process exited its change must be served: the promised VERSION_POLL_MS plus
 * room for the poll's own requests on a loaded 2-core machine. Far below what a server that stopped reading
 * the counter (never) or read it lazily (seconds) would take; the exact 0.1 s is pinned on an injected clock
 * in tests/conformance/change-feed.sqlite.test.ts.
 */
export const SEEN_WITHIN_MS = VERSION_POLL_MS + 400;

/** Asks `probe` until `done` accepts its answer (another process's change is served) and checks it took less than SEEN_WITHIN_MS. */
export async function seenFromAnotherProcess<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const { value, elapsedMs } = await pollUntil(probe, done, { what });
  expect(elapsedMs).toBeLessThan(SEEN_WITHIN_MS);
  return value;
}
