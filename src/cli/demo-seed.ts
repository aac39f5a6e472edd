/** Sample data for `gantry demo`: a key to try the gateway with, sample announcements and sample releases. */
import type { AppDeps } from "../deps";
import { seedDemoEngagement } from "./demo-seed-engagement";
import { seedDemoReleases } from "./demo-seed-releases";

export interface DemoSeed {
  apiKey: string;
  /** Curl lines for the site endpoints, given the server's base URL. */
  siteExamples: (base: string) => string;
}

export function seedDemo(deps: AppDeps): DemoSeed {
  const existing = deps.keys.get("demo");
  if (existing) deps.keys.delete(existing.id);
  const { secret } = deps.keys.create({ name: "demo", rpm: 60, concurrency: 4, quotaTokens: 1_000_000 });
  deps.keyCache.reloadIfChanged();
  const sections: Array<(base: string) => string> = [];
  sections.push(seedDemoReleases(deps), seedDemoEngagement(deps));
  return { apiKey: secret, siteExamples: (base) => sections.map((s) => s(base)).join("\n\n") };
}
