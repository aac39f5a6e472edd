// Keys: list with state, validity, limits and usage; create (secret shown once, with a copy button), edit
// limits and model lists, disable/enable, delete; per-key usage over time. Uses /admin/api/keys.
import { $, api, attempt, clear, confirmDialog, copyText, fmtBytes, fmtDate, fmtLimit, fmtNumber, fmtShort, formValues, h, listOf, notify, td } from "./common.js";
import { lineChart } from "./charts.js";
import { problemCollector, submitting, watchProblems } from "./form-errors.js";

let keys = [];
let editing = null; // the key being edited, or null when creating
let usageKey = null;
let usageDays = "30";

const editor = $("#key-editor");
const form = $("#key-form");

/** Each limit is one unbreakable piece ("4 concurrent"); lines break only between them. */
function limitsText(k) {
  const l = k.limits;
  const parts = [];
  if (l.rpm !== null) parts.push(l.rpm + " rpm");
  if (l.rpd !== null) parts.push(l.rpd + " rpd");
  if (l.concurrency !== null) parts.push(l.concurrency + " concurrent");
  if (l.quotaTokens !== null) parts.push(fmtShort(l.quotaTokens) + " tokens");
  if (l.balance !== null) parts.push("balance " + l.balance);
  if (l.maxTokens !== null) parts.push("max " + fmtShort(l.maxTokens) + "/req");
  if (!parts.length) return "unlimited";
  return parts.map((p, i) => [i ? " · " : null, h("span", { class: "nowrap" }, p)]);
}

function modelsText(k) {
  if (!k.modelMode) return "all";
  return [k.modelMode === "allow" ? "only " : "not ", k.models.map((m, i) => [i ? ", " : null, h("code", { class: "nowrap" }, m)])];
}

function remainingText(k) {
  const u = k.usage;
  if (u.remainingTokens !== null) return fmtShort(u.remainingTokens) + " tokens";
  if (u.remainingBalance !== null) return String(u.remainingBalance);
  return "∞";
}

/** What the key can do now (admission's order): the badge says "expired", not "active", for an expired key. */
const STATE_TEXT = { active: "active", disabled: "disabled", expired: "expired", not_yet_valid: "not yet valid" };

function stateBadge(k) {
  const state = k.state || k.status;
  return h("span", { class: "badge " + state }, STATE_TEXT[state] || state);
}

/** The badge, then the validity period under it ("from …", "until …"), each date kept on one line. */
function stateCell(k) {
  return [
    stateBadge(k),
    k.notBefore ? h("div", { class: "muted small nowrap" }, (k.state === "not_yet_valid" ? "from " : "since ") + fmtDate(k.notBefore)) : null,
    k.expiresAt ? h("div", { class: "muted small nowrap" }, (k.state === "expired" ? "expired " : "until ") + fmtDate(k.expiresAt)) : null,
  ];
}

function render() {
  const body = $("#keys-table tbody");
  if (!keys.length) {
    clear(body, h("tr", null, h("td", { colspan: 8, class: "muted" }, "No keys yet. Create one with “New key”.")));
    return;
  }
  clear(
    body,
    keys.map((k) =>
      h(
        "tr",
        { class: usageKey && usageKey.id === k.id ? "selected" : "", dataset: { id: k.id } },
        td("Name", [h("strong", { class: "key-name", title: k.name }, k.name), h("div", { class: "muted mono nowrap" }, k.prefix + "…")]),
        td("State", stateCell(k)),
        td("Limits", limitsText(k)),
        td("Models", modelsText(k)),
        td("Requests", fmtNumber(k.usage.requests), "num"),
        td("Tokens", fmtShort(k.usage.tokens), "num"),
        td("Remaining", remainingText(k), "num"),
        td(
          "Actions",
          h(
            "div",
            { class: "row-actions pairs" },
            h("button", { type: "button", class: "small ghost", onclick: () => showUsage(k) }, "Usage"),
            h("button", { type: "button", class: "small ghost", onclick: () => openEditor(k) }, "Edit"),
            h(
              "button",
              { type: "button", class: "small ghost", onclick: () => setStatus(k, k.status === "active" ? "disable" : "enable") },
              k.status === "active" ? "Disable" : "Enable",
            ),
            h("button", { type: "button", class: "small danger", onclick: () => remove(k) }, "Delete"),
          ),
        ),
      ),
    ),
  );
}

async function load() {
  const data = await attempt(() => api("GET", "/admin/api/keys"));
  if (!data) return;
  keys = data.data;
  render();
}

function setField(name, value) {
  const el = form.elements.namedItem(name);
  if (!el) return;
  if (el.type === "checkbox") el.checked = !!value;
  else el.value = value === null || value === undefined ? "" : String(value);
}

function openEditor(k) {
  editing = k || null;
  form.reset();
  $("#key-editor-title").textContent = k ? "Edit “" + k.name + "”" : "New key";
  $("#key-save").textContent = k ? "Save changes" : "Create key";
  for (const el of form.querySelectorAll("[data-edit-only]")) el.hidden = !k;
  if (k) {
    setField("name", k.name);
    for (const f of ["rpm", "rpd", "concurrency", "quotaTokens", "balance", "maxTokens"]) setField(f, k.limits[f]);
    setField("notBefore", k.notBefore);
    setField("expiresAt", k.expiresAt);
    setField("modelMode", k.modelMode || "all");
    setField("models", k.models.join(", "));
  }
  editor.hidden = false;
  editor.scrollIntoView({ behavior: "smooth", block: "start" });
  form.elements.namedItem("name").focus();
}

/** The form as API input; every problem in it is collected and reported at once (see form-errors.js). */
function payload(v) {
  const check = problemCollector(form);
  const out = {
    name: v.name,
    rpm: check.count("rpm", v.rpm),
    rpd: check.count("rpd", v.rpd),
    concurrency: check.count("concurrency", v.concurrency),
    quotaTokens: check.count("quotaTokens", v.quotaTokens),
    maxTokens: check.count("maxTokens", v.maxTokens),
    balance: check.amount("balance", v.balance),
    notBefore: check.time("notBefore", v.notBefore),
    expiresAt: check.time("expiresAt", v.expiresAt),
  };
  if (!v.name) check.note("name", "a key needs a name.");
  if (out.notBefore && out.expiresAt && Date.parse(out.notBefore) >= Date.parse(out.expiresAt)) {
    check.note("expiresAt", "must be after “Valid from”.");
  }
  const models = listOf(v.models);
  if (v.modelMode !== "all" && !models.length) check.note("models", "list at least one model id or glob, or choose “All models”.");
  check.done();
  if (v.modelMode === "allow") out.allowModels = models;
  else if (v.modelMode === "deny") out.denyModels = models;
  else if (editing) out.allModels = true;
  if (editing && v.resetUsage) out.resetUsage = true;
  return out;
}

/** API field names that are not form field names. */
const ALIASES = { allowModels: "models", denyModels: "models", allModels: "modelMode" };

watchProblems(form);
form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  let created = null;
  let body = null;
  const ok = await submitting(
    form,
    async () => {
      body = payload(formValues(form));
      if (editing) await api("PATCH", "/admin/api/keys/" + encodeURIComponent(editing.id), body);
      else created = await api("POST", "/admin/api/keys", body);
    },
    { aliases: ALIASES, failure: editing ? "Not saved" : "Not created" },
  );
  if (!ok) return;
  if (created) showSecret(created);
  else notify("Saved “" + body.name + "”.");
  editor.hidden = true;
  await load();
});

$("#key-cancel").addEventListener("click", () => (editor.hidden = true));
$("#new-key").addEventListener("click", () => openEditor(null));

/** The secret exists only in this answer: shown once, with a copy button, and never stored by the page. */
function showSecret(created) {
  const copy = h("button", { type: "button", class: "small", onclick: (ev) => copyText(created.key, ev.currentTarget) }, "Copy");
  clear(
    $("#created"),
    h(
      "div",
      { class: "secret", id: "new-secret" },
      h("div", null, h("strong", null, "Key “" + created.name + "” created. "), "Copy it now: it is not shown again."),
      h("code", { id: "new-secret-value" }, created.key),
      copy,
      h("button", { type: "button", class: "small ghost", onclick: () => clear($("#created")) }, "Done"),
    ),
  );
}

async function setStatus(k, action) {
  await attempt(async () => {
    await api("POST", "/admin/api/keys/" + encodeURIComponent(k.id) + "/" + action);
    notify((action === "disable" ? "Disabled" : "Enabled") + " “" + k.name + "”.");
    await load();
  });
}

async function remove(k) {
  if (!(await confirmDialog("Delete the key “" + k.name + "”? Programs using it stop working at once.", "Delete"))) return;
  await attempt(async () => {
    await api("DELETE", "/admin/api/keys/" + encodeURIComponent(k.id));
    notify("Deleted “" + k.name + "”.");
    if (usageKey && usageKey.id === k.id) $("#key-usage").hidden = true;
    await load();
  });
}

async function showUsage(k) {
  usageKey = k;
  render();
  const data = await attempt(() => api("GET", "/admin/api/keys/" + encodeURIComponent(k.id) + "/usage?days=" + usageDays));
  if (!data) return;
  const panel = $("#key-usage");
  panel.hidden = false;
  $("#usage-title").textContent = "Usage of “" + k.name + "”";
  const u = data.key.usage;
  const kept = data.storedResponses;
  clear(
    $("#usage-cards"),
    [
      ["Requests", fmtNumber(u.requests)],
      ["Input tokens", fmtShort(u.inputTokens)],
      ["Output tokens", fmtShort(u.outputTokens)],
      ["Remaining quota", u.remainingTokens === null ? fmtLimit(null) : fmtShort(u.remainingTokens)],
      // What the key keeps now (not per day): its responses for previous_response_id and their size.
      ["Stored responses", fmtNumber(kept.responses), fmtBytes(kept.bytes)],
    ].map(([l, v, sub]) =>
      h("div", { class: "card" }, h("div", { class: "label" }, l), h("div", { class: "value" }, v), sub ? h("div", { class: "sub" }, sub) : null),
    ),
  );
  const days = fillDays(data.daily, Number(usageDays));
  lineChart(
    $("#usage-chart-tokens"),
    [
      { name: "input", points: days.map((d) => ({ x: d.t, y: d.inputTokens })) },
      { name: "output", points: days.map((d) => ({ x: d.t, y: d.outputTokens })) },
    ],
    { label: "Tokens per day", height: 180, integer: true },
  );
  lineChart(
    $("#usage-chart-requests"),
    [
      { name: "requests", points: days.map((d) => ({ x: d.t, y: d.requests })) },
      { name: "errors", points: days.map((d) => ({ x: d.t, y: d.errors })) },
    ],
    { label: "Requests per day", height: 180, integer: true },
  );
  panel.scrollIntoView({ behavior: "smooth", block: "start" });
}

/** The API lists only days with requests; the chart shows every day of the range. */
function fillDays(daily, n) {
  const DAY = 86400000;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const by = new Map(daily.map((d) => [d.bucket, d]));
  const out = [];
  for (let i = n - 1; i >= 0; i--) {
    const t = today - i * DAY;
    const d = by.get(t) || { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0 };
    out.push({ t, requests: d.requests, errors: d.errors, inputTokens: d.inputTokens, outputTokens: d.outputTokens });
  }
  return out;
}

for (const b of document.querySelectorAll("#usage-range button")) {
  b.addEventListener("click", () => {
    usageDays = b.dataset.range;
    for (const o of document.querySelectorAll("#usage-range button")) o.setAttribute("aria-pressed", String(o === b));
    if (usageKey) showUsage(usageKey);
  });
}

load();
