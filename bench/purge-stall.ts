/**
 * How long the hourly purge of expired stored responses holds the event loop, in SQLite, through Gantry's own
 * repository: N expired responses of the bench stream's size over eight keys, then purgeExpired while a ticker
 * notes the longest time between two turns of the event loop (what every open stream and request waits at most).
 *   bun bench/purge-stall.ts [--responses N]      GANTRY_BENCH_SOURCE=/path/to/checkout for another checkout's src/
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { GANTRY_SOURCE } from "./servers";

const { openDatabase } = await import(join(GANTRY_SOURCE, "src/store/sqlite/db.ts"));
const { SqliteStoredResponses } = await import(join(GANTRY_SOURCE, "src/store/sqlite/stored-responses.ts"));
const { values } = parseArgs({ args: Bun.argv.slice(2), options: { responses: { type: "string" } } });
const N = Number(values.responses ?? 50_000);

const dir = mkdtempSync(join(tmpdir(), "gantry-purge-stall-"));
const db = openDatabase(join(dir, "gantry.db"));
const repo = new SqliteStoredResponses(db);
const text = "x".repeat(900);
for (let done = 0; done < N; ) {
  const batch = Math.min(16, N - done);
  await Promise.all(
    Array.from({ length: batch }, (_, i) => {
      const id = `resp_${(done + i).toString(16).padStart(32, "0")}`;
      const response = { id, object: "response", status: "completed", output: [{ id: `msg_${id.slice(5)}0001`, type: "message", content: [{ type: "output_text", text }] }] };
      return repo.put({ id, keyId: `key_${(done + i) % 8}`, previousId: null, model: "demo-mini", account: null, createdAt: 1_000, expiresAt: 5_000, response, responseJson: JSON.stringify(response), inputItems: [], outputIdsNamed: true, inputIdsNamed: true });
    }),
  );
  done += batch;
}

let longest = 0;
const gaps: number[] = [];
let last = performance.now();
let purging = true;
const tick = () => {
  const t = performance.now();
  longest = Math.max(longest, t - last);
  gaps.push(t - last);
  last = t;
  if (purging) setImmediate(tick);
};
setImmediate(tick);
const t0 = performance.now();
const removed = await repo.purgeExpired(6_000);
const total = performance.now() - t0;
purging = false;
longest = Math.max(longest, performance.now() - last);
db.close();
rmSync(dir, { recursive: true, force: true });
gaps.sort((a, b) => a - b);
const median = gaps[gaps.length >> 1] ?? 0;
process.stdout.write(
  `purge of ${removed} expired responses: ${total.toFixed(0)} ms in all, the event loop held at most ${longest.toFixed(1)} ms at a time ` +
    `(${gaps.length} turns, median gap ${median.toFixed(1)} ms; ${GANTRY_SOURCE})\n`,
);
