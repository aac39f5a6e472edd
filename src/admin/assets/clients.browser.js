// Clients: online now, distributions by version, platform, runtime (and app, arch, locale) as bar charts,
// and online clients over time. Uses /admin/api/stats/clients and /admin/api/stats/clients/series.
import { $, api, attempt, clear, fmtNumber, h } from "./common.js";
import { barChart, bucketName, lineChart, withLiveOnline } from "./charts.js";

let minutes = "1440";
/** The overview's buckets for the same ranges (about 60-100 points), so both pages chart the same thing. */
const STEP_SECONDS = { 60: 60, 1440: 900, 10080: 7200, 43200: 43200 };
/** The live count of the last stats load: the chart's current bucket includes it (see withLiveOnline). */
let liveOnline = null;

function card(label, value, sub) {
  return h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), sub ? h("div", { class: "sub" }, sub) : null);
}

async function loadStats() {
  const s = await attempt(() => api("GET", "/admin/api/stats/clients"));
  if (!s) return;
  liveOnline = s.online;
  clear(
    $("#client-cards"),
    card("Online now", fmtNumber(s.online), "reported in the last " + Math.round(s.windowSeconds / 60) + " min"),
    card("Known clients", fmtNumber(s.knownClients), "seen in the last 90 days"),
    card("Versions online", fmtNumber(Object.keys(s.byVersion).length)),
    card("Platforms online", fmtNumber(Object.keys(s.byPlatform).length)),
  );
  const bars = [
    ["#by-version", s.byVersion, 0],
    ["#by-platform", s.byPlatform, 1],
    ["#by-runtime", s.byRuntime, 2],
    ["#by-app", s.byApp, 3],
    ["#by-arch", s.byArch, 0],
    ["#by-locale", s.byLocale, 1],
  ];
  for (const [sel, dist, colour] of bars) barChart($(sel), Object.entries(dist || {}), { colour, label: sel.slice(4) });
}

async function loadSeries() {
  const series = await attempt(() => api("GET", "/admin/api/stats/clients/series?minutes=" + minutes + "&step=" + STEP_SECONDS[minutes]));
  if (!series) return;
  const per = bucketName(series.stepSeconds);
  const points = withLiveOnline(series.points, liveOnline);
  lineChart($("#online-chart"), [{ name: "online (peak per " + per + ")", points: points.map((p) => ({ x: Date.parse(p.t), y: p.online })) }], {
    label: "Clients online over time, peak per " + per,
    integer: true,
  });
}

for (const b of document.querySelectorAll("#online-range button")) {
  b.addEventListener("click", () => {
    minutes = b.dataset.range;
    for (const o of document.querySelectorAll("#online-range button")) o.setAttribute("aria-pressed", String(o === b));
    loadSeries();
  });
}

/** Stats first: the chart's last point takes the live count from them. */
async function loadAll() {
  await loadStats();
  await loadSeries();
}

loadAll();
setInterval(() => {
  if (!document.hidden) loadAll();
}, 30000);
