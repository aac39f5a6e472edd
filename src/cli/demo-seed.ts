/** Sample data for `gantry demo`: a key to try the gateway with (and, as the site grows, releases and announcements). */
import type { AppDeps } from "../deps";

export function seedDemo(deps: AppDeps): { apiKey: string; extraExamples: (base: string) => string } {
  const existing = deps.keys.get("demo");
  if (existing) deps.keys.delete(existing.id);
  const { secret } = deps.keys.create({ name: "demo", rpm: 60, concurrency: 4, quotaTokens: 1_000_000 });
  deps.keyCache.reloadIfChanged();
  return { apiKey: secret, extraExamples: () => "" };
}
