/**
 * The static skeleton of each back-office page (headings, forms, empty chart boxes). The page's script fills
 * it from the JSON API; keeping the markup here lets the pages render their frame without JavaScript.
 * Forms are `novalidate`: the page checks them itself and lists every problem at once (form-errors.js),
 * where the browser's own bubbles would show one at a time.
 */
import type { AdminPageId } from "./layout";

const rangeButtons = (id: string, ranges: Array<[string, string]>, selected: string) =>
  `<div class="segmented" id="${id}" role="group">${ranges
    .map(([value, label]) => `<button type="button" data-range="${value}" aria-pressed="${value === selected}">${label}</button>`)
    .join("")}</div>`;

const overview = `
<div class="panel-head"><span class="muted" id="generated">Loading…</span>${rangeButtons(
  "range",
  [["1h", "1 h"], ["24h", "24 h"], ["7d", "7 d"], ["30d", "30 d"]],
  "1h",
)}</div>
<section class="cards" id="cards" aria-label="Summary"></section>
<div class="grid2">
<section class="panel"><h2 id="title-requests">Requests</h2><div id="chart-requests"></div></section>
<section class="panel"><h2>Error rate (%)</h2><div id="chart-errors"></div></section>
<section class="panel"><h2 id="title-tokens">Tokens</h2><div id="chart-tokens"></div></section>
<section class="panel"><h2>Upstream latency (time to first byte, ms)</h2><div id="chart-latency"></div></section>
</div>
<section class="panel"><h2 id="title-online">Clients online</h2><div id="chart-online"></div></section>`;

const keyFields = `
<label class="wide">Name<input name="name" required maxlength="100" autocomplete="off"></label>
<label>Requests / minute<input name="rpm" inputmode="numeric" placeholder="unlimited"></label>
<label>Requests / day<input name="rpd" inputmode="numeric" placeholder="unlimited"></label>
<label>Concurrent requests<input name="concurrency" inputmode="numeric" placeholder="unlimited"></label>
<label>Token quota<input name="quotaTokens" inputmode="numeric" placeholder="unlimited"></label>
<label>Balance<input name="balance" inputmode="decimal" placeholder="unlimited"></label>
<label>Max tokens per request<input name="maxTokens" inputmode="numeric" placeholder="unlimited"></label>
<label>Valid from (ISO 8601)<input name="notBefore" placeholder="2025-01-01T00:00:00Z"></label>
<label>Expires at (ISO 8601)<input name="expiresAt" placeholder="never"></label>
<label>Models<select name="modelMode"><option value="all">All models</option><option value="allow">Only these (whitelist)</option><option value="deny">All but these (blacklist)</option></select></label>
<label class="wide">Model ids or globs (comma or space separated)<textarea name="models" rows="2" placeholder="gpt-5*, demo-mini"></textarea></label>
<label class="check" data-edit-only><input type="checkbox" name="resetUsage"> Reset usage counters</label>
<div class="form-actions"><button type="submit" id="key-save">Create key</button><button type="button" class="ghost" id="key-cancel">Cancel</button></div>`;

const keys = `
<section class="panel">
<div class="panel-head"><h2>API keys</h2><button type="button" id="new-key">New key</button></div>
<div id="created"></div>
<div class="table-wrap"><table class="stack" id="keys-table"><thead><tr>
<th>Name</th><th>State and validity</th><th>Limits</th><th>Models</th><th class="num">Requests</th><th class="num">Tokens</th><th class="num">Remaining</th><th>Actions</th>
</tr></thead><tbody><tr><td colspan="8" class="muted">Loading…</td></tr></tbody></table></div>
</section>
<section class="panel" id="key-editor" hidden>
<h2 id="key-editor-title">New key</h2>
<form class="fields" id="key-form" autocomplete="off" novalidate>${keyFields}</form>
</section>
<section class="panel" id="key-usage" hidden>
<div class="panel-head"><h2 id="usage-title">Usage</h2>${rangeButtons("usage-range", [["7", "7 d"], ["30", "30 d"], ["90", "90 d"]], "30")}</div>
<div class="cards" id="usage-cards"></div>
<div class="grid2"><div><h3>Tokens per day</h3><div id="usage-chart-tokens"></div></div><div><h3>Requests per day</h3><div id="usage-chart-requests"></div></div></div>
</section>`;

const announcementFields = `
<label class="wide">Title<input name="title" required maxlength="200"></label>
<label class="wide">Body<textarea name="body" required maxlength="10000" rows="4"></textarea></label>
<label>Surface<select name="targetSurface"><option value="all">Client and home</option><option value="client">Client only</option><option value="home">Home only</option></select></label>
<label>Level<select name="level"><option value="info">info</option><option value="warning">warning</option><option value="critical">critical</option></select></label>
<label>Display<select name="displayType" title="Sets both type and displayType of the item"><option value="modal">modal dialog</option><option value="banner">banner</option><option value="toast">toast</option></select><span class="muted small" id="display-note"></span></label>
<label>App (empty = any)<input name="app" maxlength="128"></label>
<label>Button text<input name="ctaText" maxlength="100"></label>
<label>Button URL<input name="ctaUrl" maxlength="2048" placeholder="https://…"></label>
<label>From version<input name="minVersion" maxlength="64" placeholder="any"></label>
<label>Up to version<input name="maxVersion" maxlength="64" placeholder="any"></label>
<label>Start (ISO 8601)<input name="startAt" maxlength="64" placeholder="now"></label>
<label>Expires (ISO 8601)<input name="expiresAt" maxlength="64" placeholder="never"></label>
<label>Dismiss key<input name="dismissKey" maxlength="128" placeholder="generated"></label>
<label class="check"><input type="checkbox" name="testOnly"> Test only</label>
<label class="wide">Translations (JSON)<textarea name="locales" rows="2" placeholder='{"zh-CN": {"title": "…", "body": "…"}}'></textarea></label>
<label>Preview locale<input name="previewLocale" maxlength="35" placeholder="default"></label>
<div class="form-actions"><button type="submit" id="ann-save">Create</button><button type="button" class="ghost" id="ann-cancel">Cancel</button></div>`;

const announcements = `
<section class="panel">
<div class="panel-head"><h2>Announcements</h2><button type="button" id="new-ann">New announcement</button></div>
<div class="table-wrap"><table class="stack" id="ann-table"><thead><tr>
<th>Title</th><th>Status</th><th>Surface</th><th>Level</th><th>Versions</th><th>Shown</th><th>Dismiss key</th><th>Actions</th>
</tr></thead><tbody><tr><td colspan="8" class="muted">Loading…</td></tr></tbody></table></div>
</section>
<section class="panel" id="ann-editor" hidden>
<h2 id="ann-editor-title">New announcement</h2>
<form class="fields" id="ann-form" autocomplete="off" novalidate>${announcementFields}</form>
<h3>Live preview</h3>
<p class="error-text" id="preview-error" role="alert"></p>
<div class="preview" id="ann-preview"><div class="surface" id="preview-client"></div><div class="surface" id="preview-home"></div></div>
</section>`;

const releases = `
<div class="grid2">
<section class="panel"><h2>Publish a release</h2>
<form class="fields" id="publish-form" autocomplete="off" novalidate>
<label>Version<input name="version" required maxlength="256" placeholder="1.4.0"></label>
<label>Minimum app version<input name="minAppVersion" maxlength="256"></label>
<label class="wide">Notes<textarea name="notes" rows="2"></textarea></label>
<label class="check"><input type="checkbox" name="prerelease"> Pre-release</label>
<label class="wide">Files<input type="file" name="files" multiple></label>
<div class="form-actions"><button type="submit">Publish</button></div>
</form>
<div id="upload-progress"></div>
</section>
<section class="panel"><h2>Sync from GitHub Releases</h2>
<form class="fields" id="sync-form" autocomplete="off" novalidate>
<label class="wide">Repository (OWNER/REPO)<input name="github" maxlength="201" placeholder="owner/repo"></label>
<label class="check"><input type="checkbox" name="prereleases"> Include pre-releases</label>
<div class="form-actions"><button type="submit" id="sync-start">Start sync</button></div>
</form>
<div id="sync-status" aria-live="polite"></div>
</section>
</div>
<section class="panel"><div class="panel-head"><h2>Releases</h2><span class="muted" id="release-count"></span></div><div id="releases"><p class="muted">Loading…</p></div></section>`;

const clients = `
<section class="cards" id="client-cards" aria-label="Summary"></section>
<div class="grid3">
<section class="panel"><h2>By version</h2><div id="by-version"></div></section>
<section class="panel"><h2>By platform</h2><div id="by-platform"></div></section>
<section class="panel"><h2>By runtime</h2><div id="by-runtime"></div></section>
</div>
<div class="grid3">
<section class="panel"><h2>By app</h2><div id="by-app"></div></section>
<section class="panel"><h2>By architecture</h2><div id="by-arch"></div></section>
<section class="panel"><h2>By locale</h2><div id="by-locale"></div></section>
</div>
<section class="panel"><div class="panel-head"><h2>Online over time</h2>${rangeButtons(
  "online-range",
  [["60", "1 h"], ["1440", "24 h"], ["10080", "7 d"], ["43200", "30 d"]],
  "1440",
)}</div><div id="online-chart"></div></section>`;

const upstreams = `
<section class="panel">
<div class="panel-head"><h2>Upstream accounts</h2><span class="muted" id="upstreams-generated"></span></div>
<p class="muted">State shared by every instance when Redis is configured; counts are this instance's since it started.</p>
<div class="table-wrap"><table class="stack" id="upstreams-table"><thead><tr>
<th>Name</th><th>State</th><th>Cooling until</th><th>Why</th><th class="num">In flight</th><th class="num">Requests</th><th>Failures</th><th class="num">Failovers</th><th class="num">Cooldowns</th><th>Actions</th>
</tr></thead><tbody><tr><td colspan="10" class="muted">Loading…</td></tr></tbody></table></div>
<div id="upstream-test" aria-live="polite"></div>
</section>`;

export const PAGE_BODIES: Record<AdminPageId, { title: string; body: string }> = {
  overview: { title: "Overview", body: overview },
  keys: { title: "Keys", body: keys },
  announcements: { title: "Announcements", body: announcements },
  releases: { title: "Releases", body: releases },
  clients: { title: "Clients", body: clients },
  upstreams: { title: "Upstreams", body: upstreams },
};
