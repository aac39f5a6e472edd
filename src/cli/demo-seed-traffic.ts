/**
 * Sample gateway traffic for `gantry demo`, so the back office's Overview, Keys and the portal show usage on
 * first look: two more keys (one busy app, one nightly job whose key expired three days ago) and 30 days of
 * ledger rows for them and the demo key, busier by day, with a few rate-limit and upstream errors.
 *
 * Written through the ledger's own batch write (which also advances each key's running totals), and only
 * into a data dir whose ledger is empty: a kept data dir is not given a second helping, and a real server's
 * usage is never mixed with made-up rows.
 */
import type { AppDeps } from "../deps";
import { costOf } from "../gateway/limits/rules/quota";
import type { LedgerEntry } from "../gateway/usage/ledger-repository";
import { dailyRhythm, demoRandom, type DemoRandom } from "./demo-seed-random";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

interface Profile {
  keyId: string;
  models: ReadonlyArray<readonly [string, number]>;
  /** Requests per hour at the busiest time of day. */
  peakPerHour: number;
  from: number;
  to: number;
  /** Only these UTC hours (a nightly job); all day when absent. */
  hours?: readonly number[];
  /** Typical input and output tokens of one request. */
  inputTokens: number;
  outputTokens: number;
}

async function getOrCreateKey(deps: AppDeps, name: string, fields: Parameters<AppDeps["keys"]["create"]>[0]): Promise<string> {
  return ((await deps.keys.get(name)) ?? (await deps.keys.create({ ...fields, name })).key).id;
}

function entry(deps: AppDeps, rnd: DemoRandom, p: Profile, ts: number, n: number): LedgerEntry {
  const model = rnd.pick(p.models);
  const roll = rnd.next();
  // About 2 % refused by a rate limit (never reached the upstream), 0.5 % failed upstream.
  const limited = roll < 0.02;
  const failed = !limited && roll < 0.025;
  const ok = !limited && !failed;
  const inputTokens = ok ? Math.round(p.inputTokens * (0.4 + rnd.next() * 1.2)) : 0;
  const outputTokens = ok ? Math.round(p.outputTokens * (0.3 + rnd.next() * 1.4)) : 0;
  const ttfb = limited ? null : rnd.int(120, model === "demo-large" ? 900 : 450);
  return {
    ts,
    requestId: `req_demo_${n.toString(36)}`,
    keyId: p.keyId,
    model,
    endpoint: rnd.next() < 0.65 ? "responses" : "chat.completions",
    status: limited ? 429 : failed ? 502 : 200,
    errorCode: limited ? "rate_limit_rpm" : failed ? "upstream_error" : null,
    inputTokens,
    outputTokens,
    reasoningTokens: ok && model === "gpt-5.4" ? Math.round(outputTokens / 3) : 0,
    cachedTokens: ok && rnd.next() < 0.3 ? Math.round(inputTokens / 2) : 0,
    cost: costOf(deps.priceOf(model), inputTokens, outputTokens),
    durationMs: limited ? rnd.int(1, 4) : (ttfb ?? 0) + rnd.int(300, 5000),
    upstreamTtfbMs: ttfb,
  };
}

/** One profile's requests, in time order: each 10-minute slot gets its share of the hourly rate. */
function requestTimes(rnd: DemoRandom, p: Profile, now: number): number[] {
  const slot = 10 * MINUTE_MS;
  const times: number[] = [];
  for (let start = Math.floor(p.from / slot) * slot; start < p.to; start += slot) {
    if (p.hours && !p.hours.includes(new Date(start).getUTCHours())) continue;
    const expected = (p.peakPerHour * (p.hours ? 1 : dailyRhythm(start, now)) * slot) / HOUR_MS;
    const count = Math.floor(expected + rnd.next());
    const slotTimes: number[] = [];
    for (let i = 0; i < count; i++) slotTimes.push(start + Math.floor(rnd.next() * slot));
    times.push(...slotTimes.filter((t) => t >= p.from && t < p.to).sort((a, b) => a - b));
  }
  return times;
}

/** Returns the number of ledger rows written (0 when the ledger already had some). */
export async function seedDemoTraffic(deps: AppDeps, demoKeyId: string): Promise<number> {
  await deps.ledger.flush();
  if ((await deps.ledger.recent(1)).length > 0) return 0;
  const now = deps.now();
  const mobile = await getOrCreateKey(deps, "mobile-app", { name: "mobile-app", rpm: 600, concurrency: 16, modelMode: "allow", models: ["demo-mini", "demo-large"] });
  const nightly = await getOrCreateKey(deps, "nightly-batch", { name: "nightly-batch", rpm: 120, concurrency: 4, expiresAt: now - 3 * DAY_MS });
  const profiles: Profile[] = [
    { keyId: mobile, models: [["demo-mini", 4], ["demo-large", 1]], peakPerHour: 24, from: now - 30 * DAY_MS, to: now, inputTokens: 500, outputTokens: 220 },
    { keyId: demoKeyId, models: [["demo-mini", 6], ["demo-large", 3], ["gpt-5.4", 1]], peakPerHour: 4, from: now - 7 * DAY_MS, to: now, inputTokens: 700, outputTokens: 300 },
    { keyId: nightly, models: [["demo-large", 1]], peakPerHour: 30, from: now - 30 * DAY_MS, to: now - 3 * DAY_MS, hours: [2], inputTokens: 2400, outputTokens: 900 },
  ];
  const rnd = demoRandom(20_260_101);
  const entries: LedgerEntry[] = [];
  for (const p of profiles) for (const ts of requestTimes(rnd, p, now)) entries.push(entry(deps, rnd, p, ts, entries.length));
  entries.sort((a, b) => a.ts - b.ts);
  await deps.ledger.recordMany(entries);
  return entries.length;
}
