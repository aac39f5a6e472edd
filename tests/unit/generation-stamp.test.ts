/**
 * The promise behind "a change by the CLI shows within a tenth of a second", on an injected clock: another
 * process's write (the counter in `meta` moving) is noticed by the first stamp taken GENERATION_POLL_MS after
 * the last read, never later; a write in this process is noticed by the very next stamp. The integration
 * tests check the same over HTTP with a margin for a loaded machine; this one pins the exact bound.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { openDatabase } from "../../src/store/sqlite/db";
import { GENERATION_POLL_MS, GenerationStamp } from "../../src/store/sqlite/generation-stamp";

const KEY = "announcements_generation";
let db: Database;
let now: number;
let stamp: GenerationStamp;

/** What another process's write leaves behind: the counter moved (the triggers of migration 006 do this). */
const writeByAnotherProcess = () => db.run("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", [KEY]);

beforeEach(() => {
  db = openDatabase(":memory:");
  now = 1_000;
  stamp = new GenerationStamp(db, KEY, GENERATION_POLL_MS, () => now);
});
afterEach(() => db.close());

test("the poll interval is a tenth of a second", () => {
  expect(GENERATION_POLL_MS).toBe(100);
});

test("another process's change is seen GENERATION_POLL_MS after the last read, not before", () => {
  const first = stamp.stamp();
  writeByAnotherProcess();
  now += GENERATION_POLL_MS - 1;
  expect(stamp.stamp()).toBe(first); // not read again yet: the change is not seen
  now += 1;
  const second = stamp.stamp();
  expect(second).not.toBe(first);
  // Nothing changed since: the stamp stays, however often it is read.
  now += 10 * GENERATION_POLL_MS;
  expect(stamp.stamp()).toBe(second);
});

test("a write just after a read is seen at the next read, one interval later at most", () => {
  const first = stamp.stamp();
  now += 1;
  writeByAnotherProcess();
  now += GENERATION_POLL_MS;
  expect(stamp.stamp()).not.toBe(first);
});

test("a write in this process (touch) is seen by the very next stamp, with no wait", () => {
  const first = stamp.stamp();
  stamp.touch();
  expect(stamp.stamp()).not.toBe(first);
});
