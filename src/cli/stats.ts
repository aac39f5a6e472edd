/**
 * `gantry stats clients [--json]` (online count and distributions; the JSON is the shape of
 * GET /admin/api/stats/clients) and `gantry stats series [--minutes N] [--step S] [--json]` (the per-minute
 * online series of GET /admin/api/stats/clients/series).
 */
import type { ClientStats, Distribution, OnlineSeries } from "../site/heartbeats/rules/client-stats";
import type { Group } from "./command";
import { STORE_SETTINGS, print, printJson, table, withStore } from "./common";

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

const JSON_OPTION = { json: { type: "boolean" } } as const;

export const statsGroup: Group = {
  name: "stats",
  summary: "client statistics: who is online now, and over time",
  commands: [
    {
      name: "stats clients",
      args: "[--json]",
      summary: "clients online now (reported within the last 5 minutes) and their distribution by version, platform, runtime, app, arch, locale",
      details: "--json   the answer of GET /admin/api/stats/clients",
      options: JSON_OPTION,
      settings: STORE_SETTINGS,
      run: ({ values }) =>
        withStore(values, async (deps) => {
          const s = await deps.engagement.stats.clients();
          if (values.json) printJson(s);
          else print(describeClients(s) + "\n");
        }),
    },
    {
      name: "stats series",
      args: "[--minutes N] [--step S] [--json]",
      summary: "online count over time (sampled each minute while the server runs, kept 30 days)",
      details: `--minutes N   how far back (default: 1440, one day)
--step S      seconds per point, a multiple of 60 (default: at most 1440 points)
--json        the answer of GET /admin/api/stats/clients/series`,
      options: { minutes: { type: "string" }, step: { type: "string" }, ...JSON_OPTION },
      settings: STORE_SETTINGS,
      run: ({ values }) =>
        withStore(values, async (deps) => {
          const s = await deps.engagement.stats.series({ minutes: values.minutes as string | undefined, step: values.step as string | undefined });
          if (values.json) printJson(s);
          else print(describeSeries(s) + "\n");
        }),
    },
  ],
};
