/**
 * Sample data for `gantry demo`: a key to try the gateway with, releases, announcements about them, clients
 * (some online, heartbeating while the demo runs) and past gateway traffic, so every page has something to show.
 */
import type { AppDeps } from "../deps";
import { seedDemoClients } from "./demo-seed-clients";
import { seedDemoEngagement } from "./demo-seed-engagement";
import { seedDemoReleases } from "./demo-seed-releases";
import { seedDemoTraffic } from "./demo-seed-traffic";

export interface DemoSeed {
  apiKey: string;
  /** Curl lines for the site endpoints, given the server's base URL. */
  siteExamples: (base: string) => string;
  /** Stops the sample clients' heartbeats. */
  stop: () => void;
}

export async function seedDemo(deps: AppDeps): Promise<DemoSeed> {
  // A new demo key each run: only a new key's secret can be shown.
  const existing = await deps.keys.get("demo");
  if (existing) await deps.keys.delete(existing.id);
  const { key, secret } = await deps.keys.create({ name: "demo", rpm: 60, concurrency: 4, quotaTokens: 10_000_000 });
  // Before the key cache loads: it reads each key's usage totals, which the traffic advances.
  await seedDemoTraffic(deps, key.id);
  await deps.keyCache.reload();
  const sections: Array<(base: string) => string> = [];
  sections.push(await seedDemoReleases(deps), await seedDemoEngagement(deps));
  const clients = await seedDemoClients(deps);
  return { apiKey: secret, siteExamples: (base) => sections.map((s) => s(base)).join("\n\n"), stop: clients.stop };
}
