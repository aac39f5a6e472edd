/**
 * Sample clients for `gantry demo`, so the back office's Clients page and the Overview's online card are not
 * empty on first look: installs of the demo app seen over the last 30 days on the published versions (those
 * last seen before 1.2.0 came out still run 1.1.0), a per-minute online history with a daily rhythm, and a
 * group that is online now and keeps sending heartbeats every minute while the demo runs.
 *
 * Every heartbeat goes through the public endpoint's own rules (parseHeartbeat: trimming, lower-case platform
 * names, canonical locale tags). The history is written with the client store's own writes (journal append and
 * fold, online samples); the live heartbeats through the heartbeat service, as the endpoint does. A data dir
 * that already knows clients gets only the live ones.
 */
import type { AppDeps } from "../deps";
import { parseHeartbeat, HEARTBEAT_INTERVAL_SECONDS, type MergedHeartbeat } from "../site/heartbeats/rules/heartbeat-input";
import type { ClientRepository, OnlineSample } from "../site/heartbeats/client-repository";
import { MINUTE_MS, SERIES_RETENTION_MS, minuteOf } from "../site/heartbeats/rules/client-stats";
import { dailyRhythm, demoRandom, type DemoRandom } from "./demo-seed-random";

const DAY_MS = 86_400_000;
export const DEMO_CLIENTS_KNOWN = 64;
export const DEMO_CLIENTS_ONLINE = 19;
/** When the demo's 1.2.0 came out (demo-seed-releases.ts publishes it two days back). */
const RELEASE_1_2_AGO_MS = 2 * DAY_MS;

type Fields = { app: string; version: string; platform: string; arch: string; runtime: string; locale: string };

type Platform = Pick<Fields, "platform" | "arch" | "runtime">;

const PLATFORMS: ReadonlyArray<readonly [Platform, number]> = [
  [{ platform: "windows", arch: "x64", runtime: "electron" }, 50],
  [{ platform: "macos", arch: "arm64", runtime: "electron" }, 18],
  [{ platform: "macos", arch: "x64", runtime: "electron" }, 6],
  [{ platform: "linux", arch: "x64", runtime: "electron" }, 10],
  [{ platform: "web", arch: "", runtime: "web" }, 16],
];

const LOCALES: ReadonlyArray<readonly [string, number]> = [
  ["en-US", 40],
  ["zh-CN", 25],
  ["de-DE", 12],
  ["ja-JP", 10],
  ["fr-FR", 8],
  ["pt-BR", 5],
];

function clientId(rnd: DemoRandom): string {
  const hex = Array.from({ length: 32 }, () => rnd.int(0, 15).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

function fieldsFor(rnd: DemoRandom, lastSeenAgo: number): Fields {
  const p = rnd.pick(PLATFORMS);
  // Seen since 1.2.0 came out: most have updated; seen before, all still ran 1.1.0.
  const version = lastSeenAgo < RELEASE_1_2_AGO_MS && rnd.next() < 0.8 ? "1.2.0" : "1.1.0";
  return { app: "demo", version, platform: p.platform, arch: p.arch, runtime: p.runtime, locale: rnd.pick(LOCALES) };
}

/** A heartbeat as the endpoint would record it (same normalisation), at `at`. */
function heartbeat(id: string, fields: Fields, at: number) {
  return parseHeartbeat(id, { ...fields, arch: fields.arch || undefined }, at);
}

/** Online clients over the last 30 days: a daily rhythm around today's count, ending at the count online now. */
function onlineAt(rnd: DemoRandom, minute: number, now: number): number {
  const count = Math.round(DEMO_CLIENTS_ONLINE * dailyRhythm(minute, now) + (rnd.next() - 0.5) * 1.5);
  return Math.min(DEMO_CLIENTS_ONLINE, Math.max(0, count));
}

async function seedHistory(deps: AppDeps, store: ClientRepository, rnd: DemoRandom, online: Array<{ id: string; fields: Fields }>): Promise<void> {
  const now = deps.now();
  const rows: MergedHeartbeat[] = [];
  for (const { id, fields } of online) {
    const at = now - rnd.int(5, 200) * 1000;
    const firstAt = at - rnd.int(1, 30) * DAY_MS;
    rows.push({ ...heartbeat(id, fields, at), firstAt, count: rnd.int(30, 3000) });
  }
  for (let i = online.length; i < DEMO_CLIENTS_KNOWN; i++) {
    const lastSeenAgo = rnd.int(10 * 60, 29 * 86_400) * 1000;
    const at = now - lastSeenAgo;
    const firstAt = at - rnd.int(0, 20) * DAY_MS - rnd.int(60, 3600) * 1000;
    rows.push({ ...heartbeat(clientId(rnd), fieldsFor(rnd, lastSeenAgo), at), firstAt, count: rnd.int(1, 2000) });
  }
  // One row per client (the ids are distinct), each with its first and last report and its report count.
  await store.append(rows);
  await store.fold();
  // A sample a minute for the last day, one every half hour before that (the charts of longer ranges show peaks).
  const last = minuteOf(now);
  const samples: OnlineSample[] = [];
  for (let m = last - SERIES_RETENTION_MS + DAY_MS; m <= last; m += m < last - DAY_MS ? 30 * MINUTE_MS : MINUTE_MS) {
    samples.push({ minute: m, online: m === last ? DEMO_CLIENTS_ONLINE : onlineAt(rnd, m, now) });
  }
  await store.recordSamples(samples);
}

/** Seeds clients (when the data dir has none) and starts the online group's heartbeats; returns their stop. */
export async function seedDemoClients(deps: AppDeps): Promise<{ stop: () => void }> {
  const rnd = demoRandom(42);
  const online = Array.from({ length: DEMO_CLIENTS_ONLINE }, () => ({ id: clientId(rnd), fields: fieldsFor(rnd, 0) }));
  const store = deps.engagement.clients;
  if ((await store.knownCount()) === 0) await seedHistory(deps, store, rnd, online);
  const beat = () => {
    for (const { id, fields } of online) {
      // A failed write (the demo stopping) costs one heartbeat; the next minute tries again.
      deps.engagement.heartbeats.record(heartbeat(id, fields, deps.now())).catch(() => {});
    }
  };
  beat();
  const timer = setInterval(beat, HEARTBEAT_INTERVAL_SECONDS * 1000);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
