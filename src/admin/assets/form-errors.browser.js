// Form problems shown where they are: every field named by a problem is marked (aria-invalid, a red border,
// its message under it, tied by aria-describedby), and a list above the buttons names every problem, so a
// second mistake is not hidden behind the first. Problems come from the page's own checks (FormProblems)
// or from the API's error envelope ({"error": {message, param}}, or a list of them in `error.errors`).
// Served as /admin/assets/form-errors.js.
import { dismissErrors, dismissSuccesses, notify } from "./common.js";

/** Several problems at once, each { message, param } with `param` a field name (or null). */
export class FormProblems extends Error {
  constructor(problems) {
    super(problems.map((p) => p.message).join(" "));
    this.problems = problems;
  }
}

/**
 * Collects problems while a form is read: each reader returns its value (or null after noting a problem), and
 * `done()` throws them all together. Messages start with the field's label, as the operator sees it.
 */
export function problemCollector(form) {
  const problems = [];
  const note = (param, text) => problems.push({ param, message: fieldLabel(form, param) + ": " + text });
  return {
    problems,
    note,
    /** "" -> null (no limit); else a whole number of 1 or more, as the API accepts (a key is blocked by disabling it). */
    count(param, text) {
      if (text === "" || text === undefined || text === null) return null;
      if (!/^\d+$/.test(text) || /^0+$/.test(text)) {
        return note(param, "“" + text + "” is not a whole number of 1 or more (leave it empty for no limit; disable the key to block it)."), null;
      }
      const n = Number(text);
      if (!Number.isSafeInteger(n)) return note(param, "“" + text + "” is too large."), null;
      return n;
    },
    /** "" -> null (no limit); else a number above 0 (decimals allowed), as the API accepts. */
    amount(param, text) {
      if (text === "" || text === undefined || text === null) return null;
      const n = Number(text);
      if (!Number.isFinite(n) || n <= 0) return note(param, "“" + text + "” is not a number above 0 (leave it empty for no limit)."), null;
      return n;
    },
    /** "" -> null; else an ISO 8601 date-time with a time zone, as the API accepts (a bare date has no zone). */
    time(param, text) {
      if (text === "" || text === undefined || text === null) return null;
      const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
      if (!iso.test(text) || Number.isNaN(Date.parse(text))) {
        return note(param, "“" + text + "” is not an ISO 8601 date-time with a time zone (e.g. 2025-06-01T08:00:00Z)."), null;
      }
      return text;
    },
    done() {
      if (problems.length) throw new FormProblems(problems);
    },
  };
}

/** The problems an error stands for: ours, the API's list, or its one message with its `param`. */
export function problemsOf(err) {
  if (err && Array.isArray(err.problems) && err.problems.length) return err.problems;
  return [{ message: err && err.message ? err.message : String(err), param: err && err.param ? err.param : null }];
}

/** The label text of a field (without any error shown in it), or the name itself. */
export function fieldLabel(form, name) {
  const el = name ? fieldOf(form, name) : null;
  const label = el ? el.closest("label") : null;
  if (!label) return name || "Form";
  let text = "";
  for (const node of label.childNodes) if (node.nodeType === Node.TEXT_NODE) text += node.textContent;
  return text.trim() || name;
}

function fieldOf(form, name) {
  const el = form.elements.namedItem(name);
  return el && el.nodeType === Node.ELEMENT_NODE ? el : null;
}

/**
 * The form field a `param` points at: `aliases` maps API names to field names (allowModels -> models),
 * and a dotted path (locales.zh-CN) points at its first part.
 */
function fieldFor(form, param, aliases) {
  if (!param) return null;
  const name = (aliases && aliases[param]) || param;
  return fieldOf(form, name) || fieldOf(form, (aliases && aliases[name.split(".")[0]]) || name.split(".")[0]);
}

export function clearProblems(form) {
  for (const el of form.querySelectorAll('[aria-invalid="true"]')) unmark(el);
  const list = form.querySelector(".form-problems");
  if (list) list.remove();
}

function unmark(el) {
  el.removeAttribute("aria-invalid");
  el.removeAttribute("aria-describedby");
  const label = el.closest("label");
  if (label) {
    label.classList.remove("invalid");
    const msg = label.querySelector(".field-error");
    if (msg) msg.remove();
  }
}

/**
 * Marks each problem's field and lists every problem, each line naming its field by its label; focuses the
 * first marked field. Returns the lines.
 */
export function showProblems(form, problems, aliases) {
  clearProblems(form);
  const list = document.createElement("ul");
  list.className = "form-problems";
  list.setAttribute("role", "alert");
  let first = null;
  const lines = [];
  for (const p of problems) {
    const el = fieldFor(form, p.param, aliases);
    const label = el ? fieldLabel(form, el.name) : null;
    const line = label && !p.message.startsWith(label) ? label + ": " + p.message : p.message;
    lines.push(line);
    const item = document.createElement("li");
    item.textContent = line;
    list.append(item);
    if (!el) continue;
    item.dataset.field = el.name;
    first ??= el;
    el.setAttribute("aria-invalid", "true");
    const box = el.closest("label");
    if (!box) continue;
    box.classList.add("invalid");
    let msg = box.querySelector(".field-error");
    if (!msg) {
      msg = document.createElement("span");
      msg.className = "field-error";
      msg.id = (form.id || "form") + "-error-" + el.name;
      box.append(msg);
      el.setAttribute("aria-describedby", msg.id);
    }
    // Under the field its label is already in view; the message alone says what is wrong.
    let own = label && p.message.startsWith(label + ": ") ? p.message.slice(label.length + 2) : p.message;
    own = own.charAt(0).toUpperCase() + own.slice(1);
    msg.textContent = (msg.textContent ? msg.textContent + " " : "") + own;
  }
  const actions = form.querySelector(".form-actions");
  form.insertBefore(list, actions || null);
  if (first) first.focus({ preventScroll: false });
  return lines;
}

/**
 * Runs a form's submission: old marks go; a failure marks the fields and lists every problem in the form (a
 * notice too when no field could be marked, always in the error style) and takes older success notices away;
 * a success takes older error notices away. Resolves to true when `fn` succeeded. options: { aliases (API name -> field name), failure (the
 * notice's first words, "Not saved" unless given) }.
 */
export async function submitting(form, fn, options) {
  const opts = options || {};
  clearProblems(form);
  try {
    await fn();
    dismissErrors();
    return true;
  } catch (err) {
    dismissSuccesses();
    const lines = showProblems(form, problemsOf(err), opts.aliases);
    if (!form.querySelector('[aria-invalid="true"]')) notify((opts.failure || "Not saved") + ". " + lines.join(" "), "error");
    return false;
  }
}

/** Editing a marked field takes its mark (and its lines in the list) away; the rest stay until the next try. */
export function watchProblems(form) {
  const onEdit = (ev) => {
    const el = ev.target;
    if (!el || el.getAttribute("aria-invalid") !== "true") return;
    unmark(el);
    const list = form.querySelector(".form-problems");
    if (!list) return;
    for (const item of list.querySelectorAll("li")) if (item.dataset.field === el.name) item.remove();
    if (!list.children.length) list.remove();
  };
  form.addEventListener("input", onEdit);
  form.addEventListener("change", onEdit);
}
