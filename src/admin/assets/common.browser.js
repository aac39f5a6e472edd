// Shared helpers of the back office pages: the JSON API client (session cookie + CSRF header), a tiny
// element builder (text is always set as text, never parsed as HTML), formatting and notices.
// Served as /admin/assets/common.js; plain ES modules, no build step.

const csrfMeta = document.querySelector('meta[name="csrf-token"]');
export const csrfToken = csrfMeta ? csrfMeta.getAttribute("content") : "";

/**
 * A refused API call, from the error envelope {"error": {message, type, code, param}}. `problems` lists each
 * problem the server reported ({message, param}): the envelope's own, or each of `error.errors` when the
 * server reports several at once.
 */
export class ApiError extends Error {
  constructor(status, body) {
    const e = body && body.error ? body.error : null;
    super(e && e.message ? e.message : "Request failed (HTTP " + status + ").");
    this.status = status;
    this.code = e ? e.code : null;
    this.param = e ? e.param : null;
    const listed = e && Array.isArray(e.errors) ? e.errors.filter((x) => x && x.message) : [];
    this.problems = listed.length ? listed.map((x) => ({ message: String(x.message), param: x.param || null })) : [{ message: this.message, param: this.param }];
  }
}

/** Calls the JSON API. Changes carry the CSRF token; a lost session sends the browser to sign in. */
export async function api(method, path, body, options) {
  const headers = { accept: "application/json" };
  const init = { method, headers, credentials: "same-origin" };
  if (method !== "GET" && method !== "HEAD") headers["x-csrf-token"] = csrfToken;
  if (body !== undefined) {
    if (options && options.raw) {
      init.body = body;
      headers["content-type"] = "application/octet-stream";
    } else {
      init.body = JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
  }
  const res = await fetch(path, init);
  if (res.status === 401 && !path.startsWith("/portal")) {
    location.assign("/admin/sign-in?next=" + encodeURIComponent(location.pathname));
    throw new ApiError(401, null);
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

/** h("div", { class: "x", onclick: fn }, "text", child) -> element. Strings become text nodes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "value") el.value = v;
      else if (k === "checked") el.checked = !!v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/**
 * A table cell with its column name in data-label (phones show it beside the value when a table is stacked
 * into cards); the content sits in one box, so a cell of several pieces stays one piece in that layout.
 */
export function td(label, content, cls) {
  return h("td", { "data-label": label, class: cls }, h("div", { class: "cell" }, content));
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const $ = (sel, root) => (root || document).querySelector(sel);

export function fmtNumber(n) {
  if (n === null || n === undefined) return "—";
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** 1234567 -> "1.2M": short numbers for cards and chart axes. */
export function fmtShort(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "—";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1).replace(/\.0$/, "") + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
  return String(Math.round(n * 100) / 100);
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? v + " B" : v.toFixed(1) + " " + units[i];
}

export { fmtDate } from "./time.js";

/** "1 asset", "2 assets": a count with its noun, pluralised by adding "s" unless a plural is given. */
export function plural(n, noun, nouns) {
  return fmtNumber(n) + " " + (n === 1 ? noun : nouns || noun + "s");
}

export function fmtLimit(v) {
  return v === null || v === undefined ? "∞" : fmtShort(v);
}

/**
 * A short notice at the bottom of the screen. `kind`: "ok" (the default: something was done), "warn" (done,
 * but not all of it) or "error" (not done). A success takes older errors and warnings away (they are
 * answered); a failure takes older successes away (beside a failure they read as if it had worked). Errors
 * are announced at once (role=alert) and stay longer, with a close button.
 */
export function notify(message, kind) {
  const box = document.getElementById("toast");
  if (!box) return;
  const k = kind === "error" || kind === "warn" ? kind : "ok";
  if (k === "ok") dismissErrors();
  else dismissSuccesses();
  // The same notice twice is shown once.
  for (const old of box.querySelectorAll(".toast")) if (old.firstChild.textContent === message) old.remove();
  const close = h("button", { type: "button", class: "toast-close", "aria-label": "Close", onclick: () => item.remove() }, "×");
  const item = h("div", { class: "toast " + k, role: k === "error" ? "alert" : null }, h("span", null, message), close);
  box.append(item);
  setTimeout(() => item.remove(), k === "ok" ? 4000 : 12000);
}

function dismiss(selector) {
  const box = document.getElementById("toast");
  if (box) for (const old of box.querySelectorAll(selector)) old.remove();
}

/** Takes away error and warning notices: a later action succeeded, so they are answered. */
export function dismissErrors() {
  dismiss(".toast.error, .toast.warn");
}

/** Takes away success notices: an action just failed, and they must not read as its outcome. */
export function dismissSuccesses() {
  dismiss(".toast.ok");
}

export async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard API needs a secure context; fall back to a selected, hidden textarea.
    const area = h("textarea", { class: "offscreen", readonly: true }, text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  if (button) {
    const label = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => (button.textContent = label), 1500);
  }
}

/** Runs fn and reports a failure as a notice instead of an uncaught error. */
export async function attempt(fn) {
  try {
    return await fn();
  } catch (err) {
    notify(err && err.message ? err.message : String(err), "error");
    return undefined;
  }
}

/** Form fields by name -> values ("" for empty). */
export function formValues(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    out[el.name] = el.type === "checkbox" ? el.checked : el.value.trim();
  }
  return out;
}

export function listOf(text) {
  return String(text || "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A modal dialog built on <dialog>; resolves when closed. */
export function openDialog(title, body, actions) {
  const dialog = h("dialog", { class: "dialog" }, h("h2", null, title), body, h("div", { class: "actions" }, actions || []));
  document.body.append(dialog);
  dialog.addEventListener("close", () => dialog.remove());
  dialog.showModal();
  return dialog;
}

export function confirmDialog(message, okLabel) {
  return new Promise((resolve) => {
    let ok = false;
    const dialog = openDialog("Please confirm", h("p", null, message), [
      h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, "Cancel"),
      h("button", { type: "button", class: "danger", onclick: () => ((ok = true), dialog.close()) }, okLabel || "OK"),
    ]);
    dialog.addEventListener("close", () => resolve(ok));
  });
}

// Sign out: a POST with the CSRF token, then back to the sign-in page.
const signOut = document.getElementById("sign-out");
if (signOut) {
  signOut.addEventListener("click", async () => {
    await fetch("/admin/sign-out", { method: "POST", credentials: "same-origin", headers: { "x-csrf-token": csrfToken } });
    location.assign("/admin/sign-in");
  });
}
