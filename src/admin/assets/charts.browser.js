// Small SVG charts drawn by hand (no chart library, nothing from a CDN): a time-series line chart with a
// hover read-out, and a horizontal bar chart for distributions. Colours come from CSS classes (s0..s3), so
// the strict Content-Security-Policy (no inline styles) holds. Served as /admin/assets/charts.js.

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/**
 * The y axis: a round top and a step of 1, 2 or 5 x 10^n, at most five steps. Counts (`integer`) never get a
 * step below 1, so an axis of requests reads 0, 1, 2 and not 0.25, 0.5, 0.75.
 */
export function niceScale(maxValue, integer) {
  const v = maxValue > 0 ? maxValue : 0;
  const raw = v / 5;
  let step = raw > 0 ? Math.pow(10, Math.floor(Math.log10(raw))) : 1;
  for (const m of [1, 2, 5, 10]) {
    if (m * step >= raw) {
      step = m * step;
      break;
    }
  }
  if (integer) step = Math.max(1, Math.round(step));
  const steps = Math.max(1, Math.ceil(v / step - 1e-9));
  return { max: steps * step, step, steps };
}

/** 60 -> "minute", 900 -> "15 minutes", 43200 -> "12 hours", 86400 -> "day": the unit a chart's bucket is. */
export function bucketName(seconds) {
  const units = [
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ];
  for (const [size, name] of units) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? name : n + " " + name + "s";
    }
  }
  return seconds + " seconds";
}

/**
 * The online series ends with the bucket that holds "now", but that bucket's samples are taken once a minute;
 * the live count (the card beside it) belongs to the same bucket, so the last point is at least that count
 * and the card and the chart never disagree.
 */
export function withLiveOnline(points, liveCount) {
  if (!points.length || liveCount === null || liveCount === undefined) return points;
  const last = points[points.length - 1];
  return points.slice(0, -1).concat([{ ...last, online: Math.max(last.online ?? 0, liveCount) }]);
}

function shortNumber(n) {
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1).replace(/\.0$/, "") + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
  if (a >= 1e3) return (n / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
  return String(Math.round(n * 100) / 100);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Axis times are UTC, like every date in the back office: hours within two days, else day and month. */
function timeLabel(ms, spanMs) {
  const d = new Date(ms);
  if (spanMs <= 2 * 86400000) return d.toISOString().slice(11, 16);
  return d.getUTCDate() + " " + MONTHS[d.getUTCMonth()];
}

const MIN = 60000;
const TICK_INTERVALS = [1, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2 * 1440, 7 * 1440].map((m) => m * MIN);

/** Round UTC times (whole 15 minutes, hours, days...) between x0 and x1, at most `most` of them. */
export function timeTicks(x0, x1, most) {
  const span = Math.max(1, x1 - x0);
  const every = TICK_INTERVALS.find((i) => span / i <= most) || TICK_INTERVALS[TICK_INTERVALS.length - 1];
  const out = [];
  for (let t = Math.ceil(x0 / every) * every; t <= x1; t += every) out.push(t);
  return out;
}

/** Re-draws when the container changes width, so a phone rotation or a resize keeps charts crisp. */
function whenResized(container, draw) {
  let width = container.clientWidth;
  draw();
  if (typeof ResizeObserver === "undefined") return;
  const ro = new ResizeObserver(() => {
    if (Math.abs(container.clientWidth - width) < 2) return;
    width = container.clientWidth;
    draw();
  });
  ro.observe(container);
}

/**
 * series: [{ name, points: [{ x: epochMs, y: number|null }] }]; options: { height, yFormat, integer, label }.
 * `integer`: the values are counts, so the axis ticks are whole numbers (the default when every value is
 * whole). Nulls break the line (no sample: the server was not running).
 */
export function lineChart(container, series, options) {
  const opts = options || {};
  container.classList.add("chart-box");
  whenResized(container, () => drawLine(container, series, opts));
}

function lastValue(points) {
  for (let i = points.length - 1; i >= 0; i--) if (points[i].y !== null && points[i].y !== undefined) return points[i].y;
  return "";
}

function drawLine(container, series, opts) {
  const W = Math.max(260, container.clientWidth || 600);
  const H = opts.height || 200;
  const pad = { l: 46, r: 10, t: 10, b: 24 };
  const fmt = opts.yFormat || shortNumber;
  const xs = [];
  let maxY = 0;
  let count = 0;
  let allWhole = true;
  for (const ser of series) {
    for (const p of ser.points) {
      xs.push(p.x);
      if (p.y !== null && p.y !== undefined) {
        count++;
        if (p.y > maxY) maxY = p.y;
        if (!Number.isInteger(p.y)) allWhole = false;
      }
    }
  }
  // Whole-number data (counts) gets whole-number ticks even when the caller did not say so (the portal).
  const scale = niceScale(maxY, opts.integer ?? allWhole);
  const yMax = scale.max;
  const x0 = xs.length ? Math.min(...xs) : Date.now() - 3600000;
  const x1 = xs.length ? Math.max(...xs) : Date.now();
  const span = Math.max(1, x1 - x0);
  const px = (x) => pad.l + ((x - x0) / span) * (W - pad.l - pad.r);
  const py = (y) => pad.t + (1 - y / yMax) * (H - pad.t - pad.b);

  const svg = s("svg", {
    class: "chart line-chart",
    viewBox: "0 0 " + W + " " + H,
    width: W,
    height: H,
    role: "img",
    "aria-label": opts.label || series.map((x) => x.name).join(", "),
    "data-series": series.length,
    "data-points": count,
    // Each series' newest value, for anyone checking the chart against the cards beside it (tests do).
    "data-last": series.map((ser) => lastValue(ser.points)).join(","),
  });
  for (let i = 0; i <= scale.steps; i++) {
    const y = Number((scale.step * i).toFixed(6)); // 0.15, not 0.15000000000000002
    svg.append(s("line", { class: "grid", x1: pad.l, x2: W - pad.r, y1: py(y), y2: py(y) }));
    svg.append(s("text", { class: "axis y-tick", x: pad.l - 6, y: py(y) + 4, "text-anchor": "end" }, fmt(y)));
  }
  for (const x of timeTicks(x0, x1, W < 420 ? 3 : 6)) {
    // Labels near an edge are anchored inwards so they are not cut off.
    const at = px(x);
    const anchor = at - pad.l < 20 ? "start" : W - pad.r - at < 20 ? "end" : "middle";
    svg.append(s("text", { class: "axis x-tick", x: at, y: H - 6, "text-anchor": anchor }, timeLabel(x, span)));
  }
  series.forEach((ser, si) => {
    // Runs of consecutive values become one path each; a lone value (its neighbours missing) becomes a dot,
    // since a one-point path would draw nothing.
    const runs = [];
    let run = [];
    for (const p of ser.points) {
      if (p.y === null || p.y === undefined) {
        if (run.length) runs.push(run);
        run = [];
      } else run.push([px(p.x), py(p.y)]);
    }
    if (run.length) runs.push(run);
    let d = "";
    for (const r of runs) {
      if (r.length === 1) svg.append(s("circle", { class: "dot s" + (si % 4), cx: r[0][0].toFixed(1), cy: r[0][1].toFixed(1), r: 3 }));
      else d += r.map((pt, i) => (i ? "L" : "M") + pt[0].toFixed(1) + " " + pt[1].toFixed(1)).join("");
    }
    if (d) svg.append(s("path", { class: "line s" + (si % 4), d }));
  });
  if (count === 0) svg.append(s("text", { class: "empty", x: W / 2, y: H / 2, "text-anchor": "middle" }, "No data in this period"));

  // Hover read-out: the nearest point's values in a small box.
  const cursor = s("line", { class: "cursor", x1: 0, x2: 0, y1: pad.t, y2: H - pad.b, visibility: "hidden" });
  svg.append(cursor);
  const overlay = s("rect", { class: "overlay", x: pad.l, y: pad.t, width: W - pad.l - pad.r, height: H - pad.t - pad.b });
  svg.append(overlay);
  const tip = document.createElement("div");
  tip.className = "chart-tip";
  tip.hidden = true;
  const base = series[0] ? series[0].points : [];
  overlay.addEventListener("pointermove", (ev) => {
    if (!base.length) return;
    const rect = svg.getBoundingClientRect();
    const x = x0 + ((ev.clientX - rect.left) * (W / rect.width) - pad.l) / (W - pad.l - pad.r) * span;
    let best = 0;
    for (let i = 1; i < base.length; i++) if (Math.abs(base[i].x - x) < Math.abs(base[best].x - x)) best = i;
    const at = base[best].x;
    cursor.setAttribute("x1", px(at));
    cursor.setAttribute("x2", px(at));
    cursor.setAttribute("visibility", "visible");
    tip.replaceChildren(document.createTextNode(new Date(at).toISOString().replace("T", " ").slice(0, 16) + " UTC"));
    series.forEach((ser, si) => {
      const p = ser.points[best];
      const row = document.createElement("div");
      row.className = "tip-row s" + (si % 4);
      row.textContent = ser.name + ": " + (p && p.y !== null && p.y !== undefined ? fmt(p.y) : "—");
      tip.append(row);
    });
    tip.hidden = false;
    positionTip(tip, (px(at) / W) * rect.width, rect.width);
  });
  overlay.addEventListener("pointerleave", () => {
    tip.hidden = true;
    cursor.setAttribute("visibility", "hidden");
  });

  const legend = document.createElement("div");
  legend.className = "legend";
  series.forEach((ser, si) => {
    const item = document.createElement("span");
    item.className = "key s" + (si % 4);
    item.textContent = ser.name;
    legend.append(item);
  });
  container.replaceChildren(svg, tip, legend);
}

/** CSSOM (not a style attribute), which the Content-Security-Policy allows. */
function positionTip(tip, left, width) {
  if (left > width / 2) {
    tip.style.left = "";
    tip.style.right = Math.max(0, width - left + 8) + "px";
  } else {
    tip.style.right = "";
    tip.style.left = left + 8 + "px";
  }
}

/** entries: [[label, value]] (largest first). Long tails are folded into "other". */
export function barChart(container, entries, options) {
  const opts = options || {};
  container.classList.add("chart-box");
  const max = opts.max || 10;
  let rows = entries.slice(0, max);
  if (entries.length > max) {
    const rest = entries.slice(max).reduce((n, e) => n + e[1], 0);
    rows = rows.concat([["other (" + (entries.length - max) + ")", rest]]);
  }
  whenResized(container, () => drawBars(container, rows, opts));
}

function drawBars(container, rows, opts) {
  const W = Math.max(240, container.clientWidth || 400);
  const rowH = 26;
  const H = Math.max(1, rows.length) * rowH + 8;
  const labelW = Math.min(150, Math.round(W * 0.34));
  const valueW = 48;
  const top = Math.max(1, ...rows.map((r) => r[1]));
  const svg = s("svg", {
    class: "chart bar-chart",
    viewBox: "0 0 " + W + " " + H,
    width: W,
    height: H,
    role: "img",
    "aria-label": opts.label || "distribution",
    "data-points": rows.length,
  });
  if (!rows.length) {
    svg.append(s("text", { class: "empty", x: W / 2, y: H / 2 + 4, "text-anchor": "middle" }, "No clients online"));
  }
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    const label = String(r[0]);
    const shown = label.length > 22 ? label.slice(0, 21) + "…" : label;
    const w = Math.max(2, ((W - labelW - valueW - 8) * r[1]) / top);
    const g = s("g", { class: "bar-row" }, s("title", null, label + ": " + r[1]));
    g.append(s("text", { class: "bar-label", x: labelW - 6, y: y + 16, "text-anchor": "end" }, shown));
    g.append(s("rect", { class: "bar s" + ((opts.colour || 0) % 4), x: labelW, y: y + 3, width: w.toFixed(1), height: rowH - 8, rx: 3 }));
    g.append(s("text", { class: "bar-value", x: labelW + w + 6, y: y + 16 }, shortNumber(r[1])));
    svg.append(g);
  });
  container.replaceChildren(svg);
}
