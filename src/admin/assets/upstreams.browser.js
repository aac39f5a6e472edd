// Upstreams: each upstream account with its state, when a cooling one comes back and why, streams in flight and
// this instance's counts; test (a model-list request), disable and enable. Uses /admin/api/upstreams.
import { $, api, attempt, clear, confirmDialog, fmtDate, fmtNumber, h, notify, td } from "./common.js";

let accounts = [];

function failuresText(failures) {
  const kinds = Object.entries(failures || {});
  if (!kinds.length) return "0";
  return kinds.map(([kind, n], i) => [i ? " · " : null, h("span", { class: "nowrap" }, kind.replace(/_/g, " ") + " " + fmtNumber(n))]);
}

function render() {
  const body = $("#upstreams-table tbody");
  if (!accounts.length) {
    clear(body, h("tr", null, h("td", { colspan: 10, class: "muted" }, "No upstream accounts are configured (GANTRY_UPSTREAM_URL).")));
    return;
  }
  clear(
    body,
    accounts.map((a) =>
      h(
        "tr",
        { dataset: { name: a.name } },
        td("Name", h("strong", null, a.name)),
        td("State", h("span", { class: "badge " + a.state }, a.state)),
        td("Cooling until", a.until ? h("span", { class: "nowrap" }, fmtDate(a.until)) : "–"),
        td("Why", a.reason || "–"),
        td("In flight", fmtNumber(a.inFlight), "num"),
        td("Requests", fmtNumber(a.counters.requests), "num"),
        td("Failures", failuresText(a.counters.failures)),
        td("Failovers", fmtNumber(a.counters.failovers), "num"),
        td("Cooldowns", fmtNumber(a.counters.cooldowns), "num"),
        td(
          "Actions",
          h(
            "div",
            { class: "row-actions pairs" },
            h("button", { type: "button", class: "small ghost", onclick: () => test(a) }, "Test"),
            a.state === "disabled"
              ? h("button", { type: "button", class: "small ghost", onclick: () => change(a, "enable") }, "Enable")
              : h("button", { type: "button", class: "small ghost", onclick: () => change(a, "disable") }, "Disable"),
          ),
        ),
      ),
    ),
  );
}

async function load() {
  const data = await attempt(() => api("GET", "/admin/api/upstreams"));
  if (!data) return;
  accounts = data.data;
  render();
  $("#upstreams-generated").textContent = "as of " + fmtDate(new Date().toISOString());
}

async function test(a) {
  const out = $("#upstream-test");
  clear(out, h("p", { class: "muted" }, "Testing “" + a.name + "”…"));
  const r = await attempt(() => api("POST", "/admin/api/upstreams/" + encodeURIComponent(a.name) + "/test"));
  if (!r) return clear(out);
  clear(
    out,
    h("p", { class: r.ok ? "ok" : "message" }, "“" + a.name + "”: " + (r.ok ? "answered" : "failed") + (r.status === null ? "" : " (" + r.status + ")") + " in " + r.ms + " ms — " + r.message),
  );
}

async function change(a, action) {
  if (action === "disable" && !(await confirmDialog("Take “" + a.name + "” out of the pool until someone enables it?", "Disable"))) return;
  const updated = await attempt(() => api("POST", "/admin/api/upstreams/" + encodeURIComponent(a.name) + "/" + action));
  if (!updated) return;
  notify("“" + a.name + "” is " + updated.state + ".");
  await load();
}

load();
setInterval(() => {
  if (!document.hidden) load();
}, 10000);
