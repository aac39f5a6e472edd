// Overview: requests and tokens per bucket, error rate, upstream latency and clients online, from
// GET /admin/api/metrics/overview. Refreshes every 30 s.
import { $, api, attempt, clear, fmtBytes, fmtNumber, fmtShort, h } from "./common.js";
import { bucketName, lineChart, withLiveOnline } from "./charts.js";

let range = "1h";

const RANGE_WORDS = { "1h": "hour", "24h": "24 hours", "7d": "7 days", "30d": "30 days" };

function card(label, value, sub) {
  return h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), sub ? h("div", { class: "sub" }, sub) : null);
}

function series(points, name, pick) {
  return { name, points: points.map((p) => ({ x: Date.parse(p.t), y: pick(p) })) };
}

/** What Gantry keeps for previous_response_id and GET /v1/responses/{id}, and for how long. */
function storedCard(s) {
  if (s.retentionDays === 0) return card("Stored responses", "off", "GANTRY_STORED_RESPONSES_DAYS=0");
  return card("Stored responses", fmtNumber(s.responses), fmtBytes(s.bytes) + " · kept " + s.retentionDays + " days");
}

async function load() {
  const data = await attempt(() => api("GET", "/admin/api/metrics/overview?range=" + range));
  if (!data) return;
  const t = data.totals;
  clear(
    $("#cards"),
    card("Requests", fmtNumber(t.requests), "in the last " + (RANGE_WORDS[range] || range)),
    card("Error rate", t.errorRate === null ? "—" : t.errorRate + " %", fmtNumber(t.errors) + " errors"),
    card("Tokens", fmtShort(t.inputTokens + t.outputTokens), fmtShort(t.inputTokens) + " in · " + fmtShort(t.outputTokens) + " out"),
    card("Upstream latency", t.avgTtfbMs === null ? "—" : fmtNumber(t.avgTtfbMs) + " ms", "average time to first byte"),
    card("Clients online", fmtNumber(data.now.clientsOnline), "reported in the last 5 min"),
    card("In flight", fmtNumber(data.now.inFlight), data.now.activeKeys + " of " + data.now.keys + " keys enabled"),
    storedCard(data.now.storedResponses),
  );
  // Counts are charted per bucket (whole numbers), and the title names the bucket: a 30-day chart of
  // "requests per minute" would read 0.01.
  const per = bucketName(data.bucketSeconds);
  const p = data.points;
  $("#title-requests").textContent = "Requests per " + per;
  $("#title-tokens").textContent = "Tokens per " + per;
  $("#title-online").textContent = "Clients online (peak per " + per + ")";
  lineChart($("#chart-requests"), [series(p, "requests", (x) => x.requests), series(p, "errors", (x) => x.errors)], { label: "Requests per " + per, integer: true });
  lineChart($("#chart-errors"), [series(p, "error rate %", (x) => x.errorRate)], { label: "Error rate" });
  lineChart($("#chart-tokens"), [series(p, "input", (x) => x.inputTokens), series(p, "output", (x) => x.outputTokens)], { label: "Tokens per " + per, integer: true });
  lineChart($("#chart-latency"), [series(p, "average", (x) => x.avgTtfbMs), series(p, "max", (x) => x.maxTtfbMs)], { label: "Upstream latency", integer: true });
  const online = withLiveOnline(data.online.points, data.now.clientsOnline);
  lineChart($("#chart-online"), [{ name: "online", points: online.map((x) => ({ x: Date.parse(x.t), y: x.online })) }], { label: "Clients online", integer: true });
  $("#generated").textContent = "Updated " + new Date(data.generatedAt).toLocaleTimeString() + " · one point per " + per;
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
