// Overview: requests per minute, error rate, tokens, upstream latency and clients online, from
// GET /admin/api/metrics/overview. Refreshes every 30 s.
import { $, api, attempt, clear, fmtNumber, fmtShort, h } from "./common.js";
import { lineChart } from "./charts.js";

let range = "1h";

function card(label, value, sub) {
  return h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), sub ? h("div", { class: "sub" }, sub) : null);
}

function series(points, name, pick) {
  return { name, points: points.map((p) => ({ x: Date.parse(p.t), y: pick(p) })) };
}

async function load() {
  const data = await attempt(() => api("GET", "/admin/api/metrics/overview?range=" + range));
  if (!data) return;
  const t = data.totals;
  clear(
    $("#cards"),
    card("Requests", fmtNumber(t.requests), "in the last " + range),
    card("Error rate", t.errorRate === null ? "—" : t.errorRate + " %", fmtNumber(t.errors) + " errors"),
    card("Tokens", fmtShort(t.inputTokens + t.outputTokens), fmtShort(t.inputTokens) + " in · " + fmtShort(t.outputTokens) + " out"),
    card("Upstream latency", t.avgTtfbMs === null ? "—" : fmtNumber(t.avgTtfbMs) + " ms", "average time to first byte"),
    card("Clients online", fmtNumber(data.now.clientsOnline), "reported in the last 5 min"),
    card("In flight", fmtNumber(data.now.inFlight), data.now.activeKeys + " of " + data.now.keys + " keys active"),
  );
  const p = data.points;
  lineChart($("#chart-requests"), [series(p, "requests / min", (x) => x.requestsPerMinute)], { label: "Requests per minute" });
  lineChart($("#chart-errors"), [series(p, "error rate %", (x) => x.errorRate)], { label: "Error rate", yMax: undefined });
  lineChart($("#chart-tokens"), [series(p, "input", (x) => x.inputTokens), series(p, "output", (x) => x.outputTokens)], { label: "Tokens" });
  lineChart($("#chart-latency"), [series(p, "average", (x) => x.avgTtfbMs), series(p, "max", (x) => x.maxTtfbMs)], { label: "Upstream latency" });
  lineChart($("#chart-online"), [{ name: "online", points: data.online.points.map((x) => ({ x: Date.parse(x.t), y: x.online })) }], { label: "Clients online" });
  $("#generated").textContent = "Updated " + new Date(data.generatedAt).toLocaleTimeString() + " · buckets of " + data.bucketSeconds / 60 + " min";
}

for (const b of document.querySelectorAll("#range button")) {
  b.addEventListener("click", () => {
    range = b.dataset.range;
    for (const o of document.querySelectorAll("#range button")) o.setAttribute("aria-pressed", String(o === b));
    load();
  });
}

load();
setInterval(() => {
  if (!document.hidden) load();
}, 30000);
