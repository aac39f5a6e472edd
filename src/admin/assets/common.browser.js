// Shared helpers of the back office pages: the JSON API client (session cookie + CSRF header), a tiny
// element builder (text is always set as text, never parsed as HTML), formatting and notices.
// Served as /admin/assets/common.js; plain ES modules, no build step.

const csrfMeta = document.querySelector('meta[name="csrf-token"]');
export const csrfToken = csrfMeta ? csrfMeta.getAttribute("content") : "";

export class ApiError extends Error {
  constructor(status, body) {
    const e = body && body.error ? body.error : null;
    super(e && e.message ? e.message : "Request failed (HTTP " + status + ").");
    this.status = status;
    this.code = e ? e.code : null;
    this.param = e ? e.param : null;
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

export function fmtDate(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

/** "1 asset", "2 assets": a count with its noun, pluralised by adding "s" unless a plural is given. */
export function plural(n, noun, nouns) {
  return fmtNumber(n) + " " + (n === 1 ? noun : nouns || noun + "s");
}

export function fmtLimit(v) {
  return v === null || v === undefined ? "∞" : fmtShort(v);
}

/** A short notice at the bottom of the screen. */
export function notify(message, kind) {
  const box = document.getElementById("toast");
  if (!box) return;
  const item = h("div", { class: "toast " + (kind || "ok") }, message);
  box.append(item);
  setTimeout(() => item.remove(), kind === "error" ? 8000 : 4000);
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

export function intOrNull(text) {
  if (text === "" || text === undefined || text === null) return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new Error("'" + text + "' is not a number of 0 or more.");
  return Math.floor(n);
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
