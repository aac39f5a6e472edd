/**
 * What writing a kept response costs in SQLite, row by row, on Gantry's own schema (its migrations): the numbers
 * behind "the cost of keeping is in the rows, not the commits" in docs/performance.md.
 *   bun bench/store-rows.ts [--batches N]
 * Writes responses shaped like the bench stream's (a 955-byte response, 289 bytes of input items, three items of
 * 188 bytes), 16 to a transaction as the group commit does under load, at synchronous=OFF so the figure is CPU
 * and not the disk; then the same without each part, to see what each costs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { GANTRY_SOURCE } from "./servers";

const { openDatabase } = await import(join(GANTRY_SOURCE, "src/store/sqlite/db.ts"));
const { values } = parseArgs({ args: Bun.argv.slice(2), options: { batches: { type: "string" } } });
const BATCHES = Number(values.batches ?? 2000);
const PER_BATCH = 16;

const VARIANTS = {
  "as Gantry writes it (response row + 3 item rows)": {},
  "item rows without the item's JSON": { noItemJson: true },
  "item rows without the foreign key and the by-response index": { noItemIndexes: true },
  "no item rows": { noItems: true },
} as const;

const RESPONSE = "x".repeat(955);
const INPUT = "y".repeat(289);
const ITEM = "z".repeat(188);

function run(o: { noItemJson?: boolean; noItemIndexes?: boolean; noItems?: boolean }): number {
  const dir = mkdtempSync(join(tmpdir(), "gantry-store-rows-"));
  const db = openDatabase(join(dir, "gantry.db"));
  db.exec("PRAGMA synchronous = OFF");
  if (o.noItemIndexes) {
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec("DROP INDEX stored_items_response");
  }
  const insert = db.query(
    `INSERT INTO stored_responses (id, key_id, previous_id, model, created_at, expires_at, response, input_items, bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertItem = db.query("INSERT OR IGNORE INTO stored_items (key_id, item_id, response_id, item) VALUES (?, ?, ?, ?)");
  let n = 0;
  // Time-ordered ids, as Gantry's are.
  const id = (prefix: string) => `${prefix}_${Date.now().toString(16).padStart(12, "0")}${(n++).toString(16).padStart(20, "0")}`;
  const c0 = process.cpuUsage();
  for (let b = 0; b < BATCHES; b++) {
    db.transaction(() => {
      for (let i = 0; i < PER_BATCH; i++) {
        const responseId = id("resp");
        const now = Date.now();
        insert.run(responseId, "key_bench", null, "demo-mini", now, now + 86_400_000, RESPONSE, INPUT, RESPONSE.length + INPUT.length);
        if (!o.noItems) for (let k = 0; k < 3; k++) insertItem.run("key_bench", id("msg"), responseId, o.noItemJson ? "" : ITEM);
      }
    })();
  }
  const c = process.cpuUsage(c0);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return (c.user + c.system) / (BATCHES * PER_BATCH);
}

process.stdout.write(`CPU per kept response, ${BATCHES} transactions of ${PER_BATCH} (${GANTRY_SOURCE})\n`);
for (const [name, o] of Object.entries(VARIANTS)) process.stdout.write(`${run(o).toFixed(1).padStart(6)} µs  ${name}\n`);
