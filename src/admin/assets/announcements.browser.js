// Announcements: list, create, edit, delete, re-show (a new dismissKey), with a live preview of the item on
// each surface (the desktop client and the home page), built by the server with the public rules.
import { $, api, attempt, clear, confirmDialog, fmtDate, formValues, h, notify, td } from "./common.js";

let items = [];
let editing = null;
let previewTimer = null;
let previewSeq = 0;

const editor = $("#ann-editor");
const form = $("#ann-form");

function windowText(a) {
  const from = a.startAt ? fmtDate(a.startAt) : "always";
  return from + (a.expiresAt ? " → " + fmtDate(a.expiresAt) : "");
}

function render() {
  const body = $("#ann-table tbody");
  if (!items.length) {
    clear(body, h("tr", null, h("td", { colspan: 7, class: "muted" }, "No announcements yet.")));
    return;
  }
  clear(
    body,
    items.map((a) =>
      h(
        "tr",
        { dataset: { id: a.id } },
        td("Title", [h("strong", null, a.title), a.testOnly ? h("span", { class: "badge warn" }, "test only") : null]),
        td("Status", h("span", { class: "badge " + a.status }, a.status)),
        td("Surface", a.targetSurface),
        td("Level", h("span", { class: "badge " + a.level }, a.level)),
        td("Shown", windowText(a)),
        td("Dismiss key", h("code", null, a.dismissKey || "—")),
        td(
          "Actions",
          h(
            "div",
            { class: "row-actions" },
            h("button", { type: "button", class: "small ghost", onclick: () => openEditor(a) }, "Edit"),
            h("button", { type: "button", class: "small ghost", title: "Give it a new dismiss key so everyone sees it again", onclick: () => reshow(a) }, "Re-show"),
            h("button", { type: "button", class: "small danger", onclick: () => remove(a) }, "Delete"),
          ),
        ),
      ),
    ),
  );
}

async function load() {
  const data = await attempt(() => api("GET", "/admin/api/announcements"));
  if (!data) return;
  items = data.data;
  render();
}

const TEXT_FIELDS = ["title", "body", "type", "displayType", "targetSurface", "level", "app", "ctaText", "ctaUrl", "minVersion", "maxVersion", "startAt", "expiresAt", "dismissKey"];

function openEditor(a) {
  editing = a || null;
  form.reset();
  $("#ann-editor-title").textContent = a ? "Edit “" + a.title + "”" : "New announcement";
  $("#ann-save").textContent = a ? "Save changes" : "Create";
  if (a) {
    for (const f of TEXT_FIELDS) {
      const el = form.elements.namedItem(f);
      if (!el) continue;
      if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === a[f])) el.append(h("option", { value: a[f] }, a[f]));
      el.value = a[f] === null || a[f] === undefined ? "" : a[f];
    }
    form.elements.namedItem("testOnly").checked = !!a.testOnly;
    form.elements.namedItem("locales").value = Object.keys(a.locales || {}).length ? JSON.stringify(a.locales, null, 1) : "";
  }
  editor.hidden = false;
  editor.scrollIntoView({ behavior: "smooth", block: "start" });
  schedulePreview();
}

/** The form as announcement input: empty optional fields are left out on create, cleared ("") on edit. */
function input() {
  const v = formValues(form);
  const out = {};
  for (const f of TEXT_FIELDS) {
    const value = f === "body" ? form.elements.namedItem("body").value : v[f];
    if (value !== "" || editing) out[f] = value;
  }
  // A new item with an empty dismiss key gets a generated one; clearing it on edit is a real choice.
  if (!editing && out.dismissKey === undefined) delete out.dismissKey;
  if (editing && out.startAt === "") delete out.startAt;
  out.testOnly = v.testOnly;
  if (v.locales) {
    try {
      out.locales = JSON.parse(v.locales);
    } catch {
      throw new Error("Translations must be JSON, e.g. {\"zh-CN\": {\"title\": \"…\"}}.");
    }
  } else if (editing) out.locales = {};
  return out;
}

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(preview, 250);
}

async function preview() {
  const seq = ++previewSeq;
  const errorBox = $("#preview-error");
  let body;
  try {
    body = { input: input(), locale: form.elements.namedItem("previewLocale").value.trim() || undefined };
    if (editing) body.id = editing.id;
  } catch (err) {
    errorBox.textContent = err.message;
    return;
  }
  if (!body.input.title || !body.input.body) {
    errorBox.textContent = "";
    drawSurface($("#preview-client"), "client", null, "Type a title and a body to see the preview.");
    drawSurface($("#preview-home"), "home", null, "Type a title and a body to see the preview.");
    return;
  }
  try {
    const result = await api("POST", "/admin/api/announcements/preview", body);
    if (seq !== previewSeq) return; // a newer preview is on its way
    errorBox.textContent = result.status === "active" ? "" : "Note: with these dates the item is " + result.status + ".";
    drawSurface($("#preview-client"), "client", result.surfaces.client.item, "Not shown in the client (surface is “home”).");
    drawSurface($("#preview-home"), "home", result.surfaces.home.item, "Not shown on the home page (surface is “client”).");
  } catch (err) {
    if (seq === previewSeq) errorBox.textContent = err.message;
  }
}

/** A sketch of each surface: the app window with a modal/toast/banner, or the home page with a banner. */
function drawSurface(box, surface, item, emptyText) {
  const bar = h("div", { class: "surface-bar" }, h("span", null, surface === "client" ? "Desktop client" : "Home page"), item ? h("span", null, item.displayType) : null);
  if (!item) {
    clear(box, bar, h("div", { class: "surface-body" }, h("p", { class: "not-shown" }, emptyText)));
    return;
  }
  const actions = h(
    "div",
    { class: "mock-actions" },
    item.dismissKey ? h("span", null, "Don't show again") : null,
    item.ctaText ? h("span", { class: "cta", title: item.ctaUrl }, item.ctaText) : null,
  );
  const content = [h("div", { class: "mock-title" }, item.title), h("div", { class: "mock-body" }, item.body), actions];
  const level = "level-" + item.level;
  let body;
  if (surface === "home" || item.displayType === "banner") {
    const banner = h("div", { class: "mock-banner " + level }, h("div", null, content));
    body = h("div", { class: "surface-body home" }, banner, h("div", { class: "fake-line" }), h("div", { class: "fake-line short" }), h("div", { class: "fake-line" }));
  } else if (item.displayType === "toast") {
    body = h("div", { class: "surface-body" }, h("div", { class: "mock-toast " + level }, content));
  } else {
    body = h("div", { class: "surface-body" }, h("div", { class: "mock-modal " + level }, content));
  }
  clear(box, bar, body);
}

form.addEventListener("input", schedulePreview);
form.addEventListener("change", schedulePreview);
form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  attempt(async () => {
    const body = input();
    if (editing) {
      await api("PATCH", "/admin/api/announcements/" + editing.id, body);
      notify("Saved “" + body.title + "”.");
    } else {
      await api("POST", "/admin/api/announcements", body);
      notify("Created “" + body.title + "”.");
    }
    editor.hidden = true;
    await load();
  });
});

$("#ann-cancel").addEventListener("click", () => (editor.hidden = true));
$("#new-ann").addEventListener("click", () => openEditor(null));

async function reshow(a) {
  if (!(await confirmDialog("Show “" + a.title + "” again to everyone who dismissed it?", "Re-show"))) return;
  await attempt(async () => {
    const updated = await api("POST", "/admin/api/announcements/" + a.id + "/reshow");
    notify("New dismiss key " + updated.dismissKey + ": “" + a.title + "” shows again.");
    await load();
  });
}

async function remove(a) {
  if (!(await confirmDialog("Delete “" + a.title + "”?", "Delete"))) return;
  await attempt(async () => {
    await api("DELETE", "/admin/api/announcements/" + a.id);
    notify("Deleted “" + a.title + "”.");
    await load();
  });
}

load();
