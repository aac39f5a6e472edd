// Releases: versions and assets (source, size, SHA-256, downloads); publish by upload (with per-file
// progress); start a GitHub sync and follow it until it ends. Uses /admin/api/releases.
import { $, api, attempt, clear, confirmDialog, copyText, csrfToken, fmtBytes, fmtDate, fmtNumber, formValues, h, notify, td } from "./common.js";

const enc = encodeURIComponent;

function shortSha(sha) {
  if (!sha) return h("span", { class: "muted" }, "—");
  const hex = sha.replace(/^sha256:/, "");
  return h(
    "span",
    { class: "mono", title: sha },
    hex.slice(0, 12) + "…",
    " ",
    h("button", { type: "button", class: "small ghost", "aria-label": "Copy SHA-256", onclick: (ev) => copyText(sha, ev.currentTarget) }, "Copy"),
  );
}

function releaseBlock(r) {
  const rows = r.assets.map((a) =>
    h(
      "tr",
      null,
      td("File", [h("span", { class: "mono" }, a.name), a.mirrorError ? h("div", { class: "error-text" }, a.mirrorError) : null]),
      td("Platform", [a.platform || "—", a.arch ? " · " + a.arch : "", a.fileType ? " · " + a.fileType : ""]),
      td("Source", [h("span", { class: "badge " + a.source }, a.source), a.mirrorPending ? h("span", { class: "badge warn" }, "mirroring") : null]),
      td("Size", fmtBytes(a.size), "num"),
      td("SHA-256", shortSha(a.sha256)),
      td("Downloads", fmtNumber(a.downloads), "num"),
      td("", h("button", { type: "button", class: "small danger", onclick: () => removeAsset(r, a) }, "Delete")),
    ),
  );
  return h(
    "div",
    { class: "panel release", dataset: { version: r.version } },
    h(
      "div",
      { class: "panel-head" },
      h("h2", null, r.version, " ", r.prerelease ? h("span", { class: "badge warn" }, "pre-release") : null),
      h(
        "span",
        { class: "muted" },
        fmtDate(r.publishedAt) + " · " + fmtNumber(r.downloads) + " downloads" + (r.minAppVersion ? " · min app " + r.minAppVersion : "") + " · " + r.origin,
      ),
      h("button", { type: "button", class: "small danger", onclick: () => removeRelease(r) }, "Delete release"),
    ),
    r.notes ? h("p", { class: "muted" }, r.notes) : null,
    r.assets.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "stack" },
            h("thead", null, h("tr", null, ["File", "Platform", "Source", "Size", "SHA-256", "Downloads", ""].map((x) => h("th", { class: x === "Size" || x === "Downloads" ? "num" : "" }, x)))),
            h("tbody", null, rows),
          ),
        )
      : h("p", { class: "muted" }, "No assets."),
  );
}

async function load() {
  const data = await attempt(() => api("GET", "/admin/api/releases"));
  if (!data) return;
  $("#release-count").textContent = data.data.length + " release" + (data.data.length === 1 ? "" : "s");
  clear($("#releases"), data.data.length ? data.data.map(releaseBlock) : h("p", { class: "muted" }, "No releases yet: publish one or sync from GitHub."));
}

async function removeRelease(r) {
  if (!(await confirmDialog("Delete release " + r.version + " and its " + r.assets.length + " assets?", "Delete"))) return;
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

$("#publish-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const form = ev.currentTarget;
  attempt(async () => {
    const v = formValues(form);
    const files = [...form.elements.namedItem("files").files];
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
      await upload(v.version, file, bar);
    }
    notify("Published " + v.version + (files.length ? " with " + files.length + " file(s)." : "."));
    form.reset();
    await load();
  });
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
        " " + fmtDate(last.finishedAt) + " — " +
          last.releasesCreated.length + " new, " + last.releasesUpdated.length + " updated releases; " +
          last.downloaded.length + " files downloaded, " + last.reused.length + " reused, " + last.failed.length + " failed.",
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

$("#sync-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const v = formValues(ev.currentTarget);
  const body = { prereleases: v.prereleases };
  if (v.github) body.github = v.github;
  $("#sync-start").disabled = true;
  const run = api("POST", "/admin/api/releases/sync", body);
  run
    .then(
      (report) => notify("Sync of " + report.repo + " finished: " + report.status + "."),
      (err) => notify(err.message, "error"),
    )
    .finally(() => {
      pollSync();
      load();
    });
  // Give the server a moment to mark the sync as running, then follow it.
  setTimeout(pollSync, 300);
});

load();
pollSync();
