// Announcements: list, create, edit, delete, re-show (a new dismissKey), with a live preview of the item on
// each surface (the desktop client and the home page), built by the server with the public rules.
import { $, ApiError, api, attempt, clear, confirmDialog, fmtDate, formValues, h, notify, td } from "./common.js";
import { FormProblems, fieldLabel, problemCollector, submitting, watchProblems } from "./form-errors.js";

let items = [];
let editing = null;
let previewTimer = null;
let previewSeq = 0;

const editor = $("#ann-editor");
const form = $("#ann-form");

/** When it is shown: each date on a line of its own, never broken inside. */
function windowText(a) {
  if (!a.startAt && !a.expiresAt) return "always";
  return [
    a.startAt ? h("div", { class: "nowrap" }, "from " + fmtDate(a.startAt)) : null,
    a.expiresAt ? h("div", { class: "nowrap" }, "until " + fmtDate(a.expiresAt)) : null,
  ];
}

/** Which app builds see it: the version range (minVersion–maxVersion, either end open) and the app. */
function audienceText(a) {
  let range = "all versions";
  if (a.minVersion && a.maxVersion) range = a.minVersion === a.maxVersion ? "only " + a.minVersion : a.minVersion + "–" + a.maxVersion;
  else if (a.minVersion) range = "≥ " + a.minVersion;
  else if (a.maxVersion) range = "≤ " + a.maxVersion;
  return [h("div", { class: "nowrap" }, range), a.app ? h("div", { class: "muted small nowrap" }, "app " + a.app) : null];
}

function render() {
  const body = $("#ann-table tbody");
  if (!items.length) {
    clear(body, h("tr", null, h("td", { colspan: 8, class: "muted" }, "No announcements yet.")));
    return;
  }
  clear(
    body,
    items.map((a) =>
      h(
        "tr",
        { dataset: { id: a.id } },
        td("Title", [h("strong", null, a.title), a.testOnly ? h("div", null, h("span", { class: "badge warn" }, "test only")) : null]),
        td("Status", h("span", { class: "badge " + a.status }, a.status)),
        td("Surface", a.targetSurface),
        td("Level", h("span", { class: "badge " + a.level }, a.level)),
        td("Versions", audienceText(a)),
        td("Shown", windowText(a)),
        td("Dismiss key", a.dismissKey ? h("code", { class: "nowrap" }, a.dismissKey) : h("span", { class: "muted" }, "not dismissible")),
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

/** `type` is not among them: the one "Display" control sets both `type` and `displayType` (see read()). */
const TEXT_FIELDS = ["title", "body", "displayType", "targetSurface", "level", "app", "ctaText", "ctaUrl", "minVersion", "maxVersion", "startAt", "expiresAt", "dismissKey"];

function openEditor(a) {
  editing = a || null;
  form.reset();
  $("#display-note").textContent = "";
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
    // Items made elsewhere (CLI, API) may carry a `type` that differs; saving here makes them agree.
    $("#display-note").textContent = a.type !== a.displayType ? "Its type is “" + a.type + "”; saving sets it to the display form." : "";
    form.elements.namedItem("locales").value = Object.keys(a.locales || {}).length ? JSON.stringify(a.locales, null, 1) : "";
  }
  editor.hidden = false;
  editor.scrollIntoView({ behavior: "smooth", block: "start" });
  schedulePreview();
}

/**
 * The form as announcement input: empty optional fields are left out on create, cleared ("") on edit. The
 * display form goes into both `type` and `displayType`, so the two never disagree. `strict` (on save) also
 * asks for the required fields. Returns { out, problems }: the input as far as it could be read, and what
 * is wrong with it.
 */
function read(strict) {
  const v = formValues(form);
  const check = problemCollector(form);
  const out = {};
  for (const f of TEXT_FIELDS) {
    const value = f === "body" ? form.elements.namedItem("body").value : v[f];
    if (value !== "" || editing) out[f] = value;
  }
  if (out.displayType) out.type = out.displayType;
  // A new item with an empty dismiss key gets a generated one; clearing it on edit is a real choice.
  if (!editing && out.dismissKey === undefined) delete out.dismissKey;
  if (editing && out.startAt === "") delete out.startAt;
  out.testOnly = v.testOnly;
  if (strict && !v.title) check.note("title", "an announcement needs a title.");
  if (strict && !form.elements.namedItem("body").value.trim()) check.note("body", "an announcement needs a body.");
  if (v.locales) {
    try {
      out.locales = JSON.parse(v.locales);
    } catch {
      check.note("locales", "not JSON; write e.g. {\"zh-CN\": {\"title\": \"…\", \"body\": \"…\"}}.");
    }
  } else if (editing) out.locales = {};
  return { out, problems: check.problems };
}

/**
 * The server's own objection to an input, if any, from the preview (which checks without saving): asked when
 * the page has found problems already, so the operator sees the server's too instead of one round at a time.
 */
async function serverProblem(out, known) {
  // The server stops at its first objection: stand-ins for the fields already reported let it check the rest.
  const rest = { ...out };
  for (const p of known) if (p.param === "title" || p.param === "body") rest[p.param] = "…";
  try {
    await api("POST", "/admin/api/announcements/preview", { input: rest, id: editing ? editing.id : undefined });
    return null;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 400) return null;
    return { message: err.message, param: err.param ? String(err.param).replace(/^input\./, "") : null };
  }
}

/** API names that are not form field names: `type` is set by the Display control. */
const ALIASES = { type: "displayType" };

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(preview, 250);
}

async function preview() {
  const seq = ++previewSeq;
  const errorBox = $("#preview-error");
  const { out, problems } = read(false);
  if (problems.length) {
    errorBox.textContent = problems.map((p) => p.message).join(" ");
    drawSurface($("#preview-client"), "client", null, "Fix the problem above to see the preview.");
    drawSurface($("#preview-home"), "home", null, "Fix the problem above to see the preview.");
    return;
  }
  const body = { input: out, locale: form.elements.namedItem("previewLocale").value.trim() || undefined };
  if (editing) body.id = editing.id;
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
    // The server names the API field ('minVersion'); the operator sees the label ("From version").
    const param = err.param ? String(err.param).replace(/^input\./, "") : null;
    if (seq === previewSeq) errorBox.textContent = param ? fieldLabel(form, ALIASES[param] || param.split(".")[0]) + ": " + err.message : err.message;
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
watchProblems(form);
form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  let body = null;
  const ok = await submitting(
    form,
    async () => {
      const { out, problems } = read(true);
      if (problems.length) {
        const extra = await serverProblem(out, problems);
        if (extra && !problems.some((p) => p.param === extra.param)) problems.push(extra);
        throw new FormProblems(problems);
      }
      body = out;
      if (editing) await api("PATCH", "/admin/api/announcements/" + editing.id, body);
      else await api("POST", "/admin/api/announcements", body);
    },
    { aliases: ALIASES, failure: editing ? "Not saved" : "Not created" },
  );
  if (!ok) return;
  notify((editing ? "Saved “" : "Created “") + body.title + "”.");
  editor.hidden = true;
  await load();
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
