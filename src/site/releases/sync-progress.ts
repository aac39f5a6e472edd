/**
 * Progress of sync downloads: a pure line renderer (bytes, speed, ETA) and a reporter that redraws it on a
 * terminal. Off a terminal (logs, CI, the server's periodic sync) nothing is drawn.
 */

export interface ProgressReporter {
  start(label: string, total: number | null): void;
  update(bytes: number): void;
  finish(ok: boolean, note: string): void;
}

export const silentProgress: ProgressReporter = { start() {}, update() {}, finish() {} };

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "--";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/**
 * One line, at most `width` columns: `label [=====>     ] 12.0 MiB/40.0 MiB  3.1 MiB/s  ETA 9s`.
 * Without a total the bar is left out and the ETA is unknown.
 */
export function renderProgressLine(p: { label: string; bytes: number; total: number | null; elapsedMs: number; width: number }): string {
  const seconds = p.elapsedMs / 1000;
  const speed = seconds > 0 ? p.bytes / seconds : 0;
  const known = p.total !== null && p.total > 0;
  const amount = known ? `${formatBytes(p.bytes)}/${formatBytes(p.total!)}` : formatBytes(p.bytes);
  const eta = known && speed > 0 ? formatDuration((p.total! - p.bytes) / speed) : "--";
  const stats = ` ${amount}  ${formatBytes(Math.round(speed))}/s  ETA ${eta}`;
  const barWidth = known ? Math.max(10, Math.min(30, p.width - stats.length - 24)) : 0;
  let bar = "";
  if (known) {
    const ratio = Math.min(1, p.bytes / p.total!);
    const filled = Math.floor(ratio * barWidth);
    bar = ` [${"=".repeat(filled)}${filled < barWidth ? ">" : ""}${" ".repeat(Math.max(0, barWidth - filled - 1))}]`;
  }
  const room = Math.max(8, p.width - bar.length - stats.length - 1);
  const label = p.label.length > room ? `${p.label.slice(0, room - 1)}…` : p.label;
  return `${label}${bar}${stats}`;
}

/** Redraws one line on a TTY stream (at most ~10 times a second) and leaves a summary line per file. */
export function terminalProgress(stream: { write(s: string): unknown; columns?: number }, clock: () => number = Date.now): ProgressReporter {
  let label = "";
  let total: number | null = null;
  let started = 0;
  let lastDraw = 0;
  let bytes = 0;
  const draw = (force: boolean) => {
    const now = clock();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    const width = stream.columns ?? 80;
    stream.write(`\r\x1b[2K${renderProgressLine({ label, bytes, total, elapsedMs: now - started, width })}`);
  };
  return {
    start(l, t) {
      label = l;
      total = t;
      bytes = 0;
      started = clock();
      lastDraw = 0;
      draw(true);
    },
    update(b) {
      bytes = b;
      draw(false);
    },
    finish(ok, note) {
      draw(true);
      stream.write(`\r\x1b[2K${ok ? "✓" : "✗"} ${label}  ${note}\n`);
    },
  };
}
