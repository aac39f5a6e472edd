// The key holder's portal: the pasted key goes to POST /portal/api/usage as a bearer token (never in a URL,
// never stored); the answer is that key's limits, models, remaining quota and usage. Served as /portal/assets/portal.js.
import { lineChart } from "./charts.js";
import { fmtDate } from "./time.js";

const $ = (sel) => document.querySelector(sel);

function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function num(n) {
  return n === null || n === undefined ? "unlimited" : Number(n).toLocaleString("en-US", { maximumFractionDigits: 4 });
}

function card(label, value, sub) {
  return el("div", "card", el("div", "label", label), el("div", "value", value), sub ? el("div", "sub", sub) : null);
}

let currentKey = null;

async function fetchUsage(key) {
  const res = await fetch("/portal/api/usage", { method: "POST", headers: { authorization: "Bearer " + key, accept: "application/json" }, cache: "no-store" });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body && body.error ? body.error.message : "This key cannot be shown.");
  return body;
}

function render(data) {
  const k = data.key;
  const l = k.limits;
  const u = k.usage;
  const view = $("#view");
  const models = !k.modelMode ? "All models" : (k.modelMode === "allow" ? "Only: " : "All except: ") + k.models.join(", ");
  const limits = el(
    "table",
    null,
    el(
      "tbody",
      null,
      ...[
        ["Requests per minute", num(l.rpm)],
        ["Requests per day", num(l.rpd)],
        ["Concurrent requests", num(l.concurrency)],
        ["Max tokens per request", num(l.maxTokens)],
        ["Token quota", num(l.quotaTokens)],
        ["Balance", num(l.balance)],
        ["Valid from", fmtDate(k.notBefore)],
        ["Expires", k.expiresAt ? fmtDate(k.expiresAt) : "never"],
        ["Models", models],
      ].map(([a, b]) => el("tr", null, el("th", null, a), el("td", null, b))),
    ),
  );
  const remaining = u.remainingTokens !== null ? num(u.remainingTokens) + " tokens" : u.remainingBalance !== null ? num(u.remainingBalance) : "unlimited";
  const chart = el("div", null);
  const forget = el("button", "ghost small", "Forget key");
  forget.type = "button";
  forget.addEventListener("click", () => {
    currentKey = null;
    view.hidden = true;
    view.replaceChildren();
    $("#entry").hidden = false;
  });
  const refresh = el("button", "small", "Refresh");
  refresh.type = "button";
  refresh.addEventListener("click", () => show(currentKey));
  view.replaceChildren(
    el(
      "div",
      "top",
      el("span", "brand", "Gantry"),
      el("nav", null),
      refresh,
      forget,
    ),
    el(
      "main",
      null,
      el("h1", null, k.name, " ", el("span", "badge " + (k.state === "active" ? "active" : "disabled"), k.state.replaceAll("_", " "))),
      el("p", "muted mono", k.prefix + "…"),
      el(
        "section",
        "cards",
        card("Remaining quota", remaining),
        card("Today", num(data.today.requests) + " requests", num(data.today.inputTokens + data.today.outputTokens) + " tokens"),
        card("Last 30 days", num(data.last30Days.requests) + " requests", num(data.last30Days.inputTokens + data.last30Days.outputTokens) + " tokens"),
        card("Since creation", num(u.tokens) + " tokens", num(u.requests) + " requests"),
      ),
      el("section", "panel", el("h2", null, "Tokens per day (last 30 days)"), chart),
      el("section", "panel", el("h2", null, "Limits and models"), el("div", "table-wrap", limits)),
      el("p", "muted", "Updated " + fmtDate(data.generatedAt)),
    ),
  );
  view.hidden = false;
  $("#entry").hidden = true;
  lineChart(
    chart,
    [
      { name: "input", points: data.daily.map((d) => ({ x: Date.parse(d.day + "T00:00:00Z"), y: d.inputTokens })) },
      { name: "output", points: data.daily.map((d) => ({ x: Date.parse(d.day + "T00:00:00Z"), y: d.outputTokens })) },
    ],
    { label: "Tokens per day", height: 200 },
  );
}

async function show(key) {
  const error = $("#key-error");
  error.hidden = true;
  try {
    const data = await fetchUsage(key);
    currentKey = key;
    render(data);
  } catch (err) {
    currentKey = null;
    error.textContent = err.message;
    error.hidden = false;
  }
}

$("#key-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const input = $("#key-input");
  const key = input.value.trim();
  // The field is cleared at once: the key lives only in this page's memory while it is open.
  input.value = "";
  if (key) show(key);
});
