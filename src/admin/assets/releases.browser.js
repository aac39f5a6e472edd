// Releases: versions and assets (source, size, SHA-256, downloads), the one clients are offered marked as
// latest; publish by upload (with per-file progress); start a GitHub sync and follow it until it ends.
// Uses /admin/api/releases, and the public /api/v1/latest for which release is the latest.
import { $, api, attempt, clear, confirmDialog, copyText, csrfToken, fmtBytes, fmtDate, fmtNumber, formValues, h, notify, plural, td } from "./common.js";
import { submitting, watchProblems } from "./form-errors.js";

const enc = encodeURIComponent;

function shortSha(sha) {
  if (!sha) return h("span", { class: "muted" }, "—");
  const hex = sha.replace(/^sha256:/, "");
  return h(
    "span",
    { class: "mono nowrap", title: sha },
    hex.slice(0, 12) + "…",
    " ",
    h("button", { type: "button", class: "small ghost", "aria-label": "Copy SHA-256", onclick: (ev) => copyText(sha, ev.currentTarget) }, "Copy"),
  );
}

/**
 * The version clients are offered now: asked from the public GET /api/v1/latest itself, so the mark cannot
 * differ from what clients get (pre-releases and unparsable versions never qualify there). null: none.
 */
async function latestVersion() {
  try {
    const res = await fetch("/api/v1/latest", { headers: { accept: "application/json" }, cache: "no-store" });
    if (!res.ok) return null;
    return (await res.json()).version || null;
  } catch {
    return null;
  }
}

function releaseBlock(r, latest) {
  // The public document spells the version without a leading "v" (v2.0.0 is listed here as published).
  const isLatest = latest !== null && r.version.trim().replace(/^v/i, "") === latest;
  const rows = r.assets.map((a) =>
    h(
      "tr",
      null,
      td("File", [h("span", { class: "mono nowrap" }, a.name), a.mirrorError ? h("div", { class: "error-text" }, a.mirrorError) : null]),
      td("Platform", [a.platform || "—", a.arch ? " · " + a.arch : "", a.fileType ? " · " + a.fileType : ""], "nowrap"),
      td("Source", [h("span", { class: "badge " + a.source }, a.source), a.mirrorPending ? h("span", { class: "badge warn" }, "mirroring") : null]),
      td("Size", fmtBytes(a.size), "num"),
      td("SHA-256", shortSha(a.sha256)),
      td("Downloads", fmtNumber(a.downloads), "num"),
      td("", h("button", { type: "button", class: "small danger", onclick: () => removeAsset(r, a) }, "Delete")),
    ),
  );
  return h(
    "div",
    { class: "panel release" + (isLatest ? " latest" : ""), dataset: { version: r.version } },
    h(
      "div",
      { class: "panel-head" },
      h(
        "h2",
        null,
        r.version,
        isLatest ? h("span", { class: "badge latest", title: "The release GET /api/v1/latest offers clients now" }, "latest") : null,
        r.prerelease ? h("span", { class: "badge warn" }, "pre-release") : null,
        rolloutBadge(r),
      ),
      h(
        "span",
        { class: "muted release-meta" },
        [
          h("span", { class: "nowrap" }, fmtDate(r.publishedAt)),
          plural(r.assets.length, "asset"),
          plural(r.downloads, "download"),
          h("span", { class: "nowrap online-clients", title: "Online clients whose heartbeat reports this version" }, fmtNumber(r.onlineClients || 0) + " online"),
          r.minAppVersion ? "min app " + r.minAppVersion : null,
          r.origin === "github" ? "from GitHub" : "published here",
        ]
          .filter(Boolean)
          .map((part, i) => [i ? " · " : null, typeof part === "string" ? h("span", { class: "nowrap" }, part) : part]),
      ),
      h("button", { type: "button", class: "small danger", onclick: () => removeRelease(r) }, "Delete release"),
    ),
    rolloutControls(r),
    r.notes ? h("p", { class: "muted" }, r.notes) : null,
    r.assets.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "assets" },
            h("thead", null, h("tr", null, ["File", "Platform", "Source", "Size", "SHA-256", "Downloads", ""].map((x) => h("th", { class: x === "Size" || x === "Downloads" ? "num" : "" }, x)))),
            h("tbody", null, rows),
          ),
        )
      : h("p", { class: "muted" }, "No assets."),
  );
}

/** Staged rollout state: nothing for a release offered to everyone, else its share, paused, or yanked. */
function rolloutBadge(r) {
  if (r.yanked) return h("span", { class: "badge bad rollout", title: "Withdrawn from every document; files still downloadable" }, "yanked");
  if (r.rolloutPercent >= 100) return null;
  return h(
    "span",
    { class: "badge warn rollout", title: "Offered to this share of client ids" },
    "rollout " + r.rolloutPercent + "%" + (r.rolloutPaused ? " · paused" : ""),
  );
}

/** Percentage, pause/resume and yank/unyank: the same operations as `gantry releases rollout|pause|resume|yank|unyank`. */
function rolloutControls(r) {
  const percent = h("input", { type: "number", min: "0", max: "100", step: "1", name: "percent", value: String(r.rolloutPercent), "aria-label": "Rollout percentage for " + r.version, disabled: r.rolloutPaused || r.yanked });
  const act = (path, body, done) =>
    attempt(async () => {
      await api("POST", "/admin/api/releases/" + enc(r.version) + "/" + path, body);
      notify(done);
      await load();
    });
  return h(
    "form",
    {
      class: "rollout-controls",
      onsubmit: (ev) => {
        ev.preventDefault();
        act("rollout", { percent: Number(percent.value) }, r.version + " offered to " + percent.value + "% of clients.");
      },
    },
    h("label", { class: "nowrap" }, "Rollout ", percent, " %"),
    h("button", { type: "submit", class: "small", disabled: r.rolloutPaused || r.yanked }, "Set"),
    r.rolloutPercent < 100 && !r.yanked
      ? h("button", { type: "button", class: "small", onclick: () => act(r.rolloutPaused ? "resume" : "pause", undefined, (r.rolloutPaused ? "Resumed " : "Paused ") + r.version + ".") }, r.rolloutPaused ? "Resume" : "Pause")
      : null,
    h("button", { type: "button", class: "small danger", onclick: () => act(r.yanked ? "unyank" : "yank", undefined, (r.yanked ? "Put back " : "Yanked ") + r.version + ".") }, r.yanked ? "Unyank" : "Yank"),
  );
}

async function load() {
  const [data, latest] = await Promise.all([attempt(() => api("GET", "/admin/api/releases")), latestVersion()]);
  if (!data) return;
  $("#release-count").textContent = plural(data.data.length, "release");
  clear($("#releases"), data.data.length ? data.data.map((r) => releaseBlock(r, latest)) : h("p", { class: "muted" }, "No releases yet: publish one or sync from GitHub."));
}

async function removeRelease(r) {
  const what = r.assets.length ? " and its " + plural(r.assets.length, "asset") : "";
  if (!(await confirmDialog("Delete release " + r.version + what + "?", "Delete"))) return;
  await attempt(async () => {
    await api("DELETE", "/admin/api/releases/" + enc(r.version));
    notify("Deleted " + r.version + ".");
    await load();
  });
}

async function removeAsset(r, a) {
  if (!(await confirmDialog("Delete " + a.name + " from " + r.version + "?", "Delete"))) return;
  await attempt(async () => {
    await api("DELETE", "/admin/api/releases/" + enc(r.version) + "/assets/" + enc(String(a.id)));
    notify("Deleted " + a.name + ".");
    await load();
  });
}

/** XMLHttpRequest, because fetch() reports no upload progress. The body is the file itself. */
function upload(version, file, bar) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", "/admin/api/releases/" + enc(version) + "/assets/" + enc(file.name));
    xhr.setRequestHeader("x-csrf-token", csrfToken);
    xhr.setRequestHeader("content-type", "application/octet-stream");
    xhr.upload.addEventListener("progress", (ev) => {
      if (ev.lengthComputable) bar.value = ev.loaded / ev.total;
    });
    xhr.addEventListener("load", () => {
      bar.value = 1;
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let message = "Upload of " + file.name + " failed (HTTP " + xhr.status + ").";
      try {
        message = JSON.parse(xhr.responseText).error.message;
      } catch {}
      reject(new Error(message));
    });
    xhr.addEventListener("error", () => reject(new Error("Upload of " + file.name + " failed (network).")));
    xhr.send(file);
  });
}

const publishForm = $("#publish-form");
watchProblems(publishForm);
publishForm.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const v = formValues(publishForm);
  const files = [...publishForm.elements.namedItem("files").files];
  const ok = await submitting(
    publishForm,
    async () => {
      if (!v.version) throw Object.assign(new Error("Version: a release needs a version (e.g. 1.4.0)."), { param: "version" });
      const meta = { version: v.version, notes: v.notes, prerelease: v.prerelease };
      if (v.minAppVersion) meta.minAppVersion = v.minAppVersion;
      try {
        await api("POST", "/admin/api/releases", meta);
      } catch (err) {
        // Adding files to an existing version is fine; anything else stops here.
        if (err.code !== "conflict" || !files.length) throw err;
      }
      const box = $("#upload-progress");
      clear(box);
      for (const file of files) {
        const bar = h("progress", { max: 1, value: 0 });
        box.append(h("div", { class: "progress-row" }, h("span", { class: "mono" }, file.name + " (" + fmtBytes(file.size) + ")"), bar));
        try {
          await upload(v.version, file, bar);
        } catch (err) {
          throw Object.assign(new Error(err.message + " Release " + v.version + " exists; publish again to add the file."), { param: "files" });
        }
      }
    },
    { failure: "Not published" },
  );
  if (!ok) return;
  notify("Published " + v.version + (files.length ? " with " + plural(files.length, "file") + "." : "."));
  publishForm.reset();
  await load();
});

// Sync: the POST answers when the sync is over, so the page polls the state while it waits.
let polling = null;

function syncSummary(state) {
  const last = state.last;
  const parts = [];
  if (state.running) parts.push(h("p", null, h("span", { class: "badge warn" }, "running"), " Syncing… the list refreshes when it ends."));
  if (state.configured) parts.push(h("p", { class: "muted" }, "Configured: " + state.configured.github + (state.configured.intervalMinutes ? ", every " + state.configured.intervalMinutes + " min" : ", manual only")));
  if (last) {
    parts.push(
      h(
        "p",
        null,
        "Last sync of ",
        h("strong", null, last.repo),
        " ",
        h("span", { class: "badge " + (last.status === "ok" ? "ok" : last.status) }, last.status),
        " ",
        h("span", { class: "nowrap" }, fmtDate(last.finishedAt)),
        " — " +
          plural(last.releasesCreated.length, "new release") + ", " + last.releasesUpdated.length + " updated; " +
          plural(last.downloaded.length, "file") + " downloaded, " + last.reused.length + " reused, " + last.failed.length + " failed.",
      ),
    );
    if (last.error) parts.push(h("p", { class: "error-text" }, last.error));
    for (const f of last.failed.slice(0, 5)) parts.push(h("p", { class: "error-text" }, f.version + " / " + f.name + ": " + f.error));
  } else if (!state.running) parts.push(h("p", { class: "muted" }, "No sync has run yet."));
  clear($("#sync-status"), parts);
}

async function pollSync() {
  const state = await attempt(() => api("GET", "/admin/api/releases/sync"));
  if (!state) return;
  syncSummary(state);
  if (!$("#sync-form").elements.namedItem("github").value && state.configured) $("#sync-form").elements.namedItem("github").value = state.configured.github;
  $("#sync-start").disabled = state.running;
  if (state.running && !polling) polling = setInterval(pollSync, 1000);
  if (!state.running && polling) {
    clearInterval(polling);
    polling = null;
    load();
  }
}

/** A sync that ended "partial" or "failed" is reported as such, never in the success style. */
function reportSync(report) {
  const failed = report.failed ? report.failed.length : 0;
  if (report.status === "ok") notify("Sync of " + report.repo + " finished.");
  else if (report.status === "partial") notify("Sync of " + report.repo + " finished, but " + plural(failed, "file") + " failed: see below.", "warn");
  else notify("Sync of " + report.repo + " failed" + (report.error ? ": " + report.error : "."), "error");
}

const syncForm = $("#sync-form");
watchProblems(syncForm);
syncForm.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const v = formValues(syncForm);
  const body = { prereleases: v.prereleases };
  if (v.github) body.github = v.github;
  $("#sync-start").disabled = true;
  // Give the server a moment to mark the sync as running, then follow it.
  setTimeout(pollSync, 300);
  let report = null;
  await submitting(syncForm, async () => (report = await api("POST", "/admin/api/releases/sync", body)), { failure: "Sync not started" });
  if (report) reportSync(report);
  pollSync();
  load();
});

load();
pollSync();
