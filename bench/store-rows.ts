/**
 * What writing a kept response costs in SQLite, through Gantry's own repository (SqliteStoredResponses on its
 * migrations), so the figure follows whatever the repository writes: the numbers behind "the cost of keeping" in
 * docs/performance.md.
 *   bun bench/store-rows.ts [--batches N] [--inputs K] [--output-ids no] [--per-key N]
 *   GANTRY_BENCH_SOURCE=/path/to/checkout bun bench/store-rows.ts   (another checkout's src/, for a baseline)
 * Writes responses shaped like the bench stream's (a response of about 1,030 bytes with two output items, and its
 * input: K items, one by default, about 289 bytes each), 16 puts at a time so the group commit writes them in one
 * transaction, as it does under load. The repository commits at synchronous=NORMAL in WAL mode (no fsync), so the
 * figure is CPU, not the disk.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { GANTRY_SOURCE } from "./servers";

const { openDatabase } = await import(join(GANTRY_SOURCE, "src/store/sqlite/db.ts"));
const { SqliteStoredResponses } = await import(join(GANTRY_SOURCE, "src/store/sqlite/stored-responses.ts"));
const { values } = parseArgs({ args: Bun.argv.slice(2), options: { batches: { type: "string" }, inputs: { type: "string" }, "output-ids": { type: "string" }, "per-key": { type: "string" } } });
const BATCHES = Number(values.batches ?? 2000);
const INPUTS = Number(values.inputs ?? 1);
/** --output-ids no: output items without ids, so the repository writes no row for them (what keeping would cost if
 * output items were found through their response instead of a row each). */
const OUTPUT_IDS = values["output-ids"] !== "no";
const PER_BATCH = 16;
/**
 * The default limits (GANTRY_STORED_RESPONSES_PER_KEY, GANTRY_STORED_BYTES_PER_KEY): a checkout without them ignores
 * them. --per-key N: each key may keep N responses and is filled to them before the timing, so every timed put
 * also evicts the key's oldest (a busy key's steady state).
 */
const PER_KEY = values["per-key"] === undefined ? null : Number(values["per-key"]);
const LIMITS = { responses: PER_KEY ?? 20_000, bytes: 512 * 1024 * 1024 };

let n = 0;
/** Time-ordered ids, as Gantry's are. */
const id = (prefix: string) => `${prefix}_${Date.now().toString(16).padStart(12, "0")}${(n++).toString(16).padStart(20, "0")}`;
const message = (role: string, type: string, text: string) => ({ id: id("msg"), type: "message", role, content: [{ type, text }] });

/** Eight keys, each well under the default limits unless --per-key (then each at its limit). */
function kept(b: number) {
  const responseId = id("resp");
  const now = Date.now();
  // Output item ids as Gantry mints them since issue 32: named after the response (its hex digits, then the item's
  // number, after the input items'), which a checkout from before writes a row for like any id.
  const outputItem = (i: number) => {
    const item: Record<string, unknown> = { ...message("assistant", "output_text", "z".repeat(100)), id: `msg_${responseId.slice(5)}${i.toString(16).padStart(4, "0")}` };
    if (!OUTPUT_IDS) delete item.id;
    return item;
  };
  const output = [outputItem(INPUTS), outputItem(INPUTS + 1)];
  const response = { id: responseId, object: "response", created_at: Math.floor(now / 1000), status: "completed", model: "demo-mini", output, usage: { input_tokens: 12, output_tokens: 40, total_tokens: 52 }, padding: "x".repeat(450) };
  // Input item ids as the conversation mints them since issue 32: named after the response too, numbered first.
  const inputItems = Array.from({ length: INPUTS }, (_, i) => ({ ...message("user", "input_text", "y".repeat(200)), id: `msg_${responseId.slice(5)}${i.toString(16).padStart(4, "0")}` }));
  // As a kept stream hands it over: the response's text as the caller got it (cut from its terminal event, not
  // serialised here, so made before the timing), and whether every item id names the response.
  return {
    id: responseId, keyId: `key_bench_${b % 8}`, previousId: null, model: "demo-mini", createdAt: now, expiresAt: now + 86_400_000, response, inputItems,
    responseJson: JSON.stringify(response), inputIdsNamed: true, outputIdsNamed: OUTPUT_IDS,
  };
}

const dir = mkdtempSync(join(tmpdir(), "gantry-store-rows-"));
const db = openDatabase(join(dir, "gantry.db"));
const repo = new SqliteStoredResponses(db);
// Eight keys filled to their limit, untimed (a batch of 16 is one key's).
if (PER_KEY !== null) for (let b = 0; b < Math.ceil(PER_KEY / PER_BATCH) * 8; b++) await Promise.all(Array.from({ length: PER_BATCH }, () => repo.put(kept(b), LIMITS)));
let cpu = 0;
for (let b = 0; b < BATCHES; b++) {
  const puts = Array.from({ length: PER_BATCH }, () => kept(b));
  const c0 = process.cpuUsage();
  await Promise.all(puts.map((r) => repo.put(r, LIMITS)));
  const c = process.cpuUsage(c0);
  cpu += c.user + c.system;
}
db.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${(cpu / (BATCHES * PER_BATCH)).toFixed(1).padStart(6)} µs CPU per kept response (${INPUTS} input item(s), output ids ${OUTPUT_IDS ? "yes" : "no"}, ${PER_KEY === null ? "under the limits" : `each key at its limit of ${PER_KEY}`}, ${BATCHES} batches of ${PER_BATCH}; ${GANTRY_SOURCE})\n`);
