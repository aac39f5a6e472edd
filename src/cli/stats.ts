/**
 * `gantry stats clients [--json]` (online count and distributions; the JSON is the shape of
 * GET /admin/api/stats/clients) and `gantry stats series [--minutes N] [--step S] [--json]` (the per-minute
 * online series of GET /admin/api/stats/clients/series).
 */
import type { ClientStats, Distribution, OnlineSeries } from "../site/client-stats";
import { UsageError, commandDeps, configFrom, parse, printJson, settingsHelp, table } from "./common";

const OPTIONS = {
  json: { type: "boolean" },
  minutes: { type: "string" },
  step: { type: "string" },
} as const;

export const STATS_HELP = `Usage: gantry stats <command> [options]

Commands:
  clients [--json]                            clients online now (reported within the last 5 minutes) and
                                              their distribution by version, platform, runtime, app, arch, locale
  series [--minutes N] [--step S] [--json]    online count over time (sampled each minute while the server
                                              runs, kept 30 days); default: the last 1440 minutes; S in seconds,
                                              a multiple of 60 (default: at most 1440 points)

Settings (every command):
${settingsHelp()}`;

function distributionTable(title: string, d: Distribution, online: number): string {
  const rows = Object.entries(d).map(([value, clients]) => ({
    [title]: value,
    clients,
    share: online > 0 ? `${((clients / online) * 100).toFixed(1)}%` : "-",
  }));
  return rows.length ? table(rows, [title, "clients", "share"]) : "";
}

function describeClients(s: ClientStats): string {
  const parts = [`online: ${s.online} (reported within ${s.windowSeconds} s); known clients: ${s.knownClients}`];
  const sections: Array<[string, Distribution]> = [
    ["version", s.byVersion],
    ["platform", s.byPlatform],
    ["runtime", s.byRuntime],
    ["app", s.byApp],
    ["arch", s.byArch],
    ["locale", s.byLocale],
  ];
  for (const [title, d] of sections) {
    const t = distributionTable(title, d, s.online);
    if (t) parts.push(t);
  }
  return parts.join("\n\n");
}

function describeSeries(s: OnlineSeries): string {
  const rows = s.points.map((p) => ({ time: p.t, online: p.online ?? "-" }));
  return `online clients per ${s.stepSeconds / 60} min, ${s.from} .. ${s.to} ("-" = no sample: server not running)\n` + table(rows, ["time", "online"]);
}

export async function statsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, OPTIONS as any, false) as { values: Record<string, string | boolean | undefined> };
  if (!sub || values.help || sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(STATS_HELP + "\n");
    return sub ? 0 : 2;
  }
  if (sub !== "clients" && sub !== "series") throw new UsageError(`unknown command 'gantry stats ${sub}'`);
  const deps = commandDeps(configFrom(values));
  try {
    if (sub === "clients") {
      const s = deps.engagement.stats.clients();
      if (values.json) printJson(s);
      else process.stdout.write(describeClients(s) + "\n");
    } else {
      const s = deps.engagement.stats.series({ minutes: values.minutes, step: values.step });
      if (values.json) printJson(s);
      else process.stdout.write(describeSeries(s) + "\n");
    }
    return 0;
  } finally {
    deps.close();
    deps.db.close();
  }
}
