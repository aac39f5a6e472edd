/**
 * Names that say which process made them, so another process can tell whether their maker is gone: a lease
 * whose holder was SIGKILLed, a temp file whose writer died. A name carries `h<host>-p<pid>`, where `<host>` stands
 * for the machine and the pid namespace the pid means something in (host name, kernel boot id, pid namespace).
 * Only a name of this host can be judged, and only as "gone" when no process has that pid any more; a name of
 * another host, or of a live pid (even one reused since), is never taken for dead: the callers then fall back
 * to their own expiry.
 */
import { createHash } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

function hostIdentity(): string {
  const parts = [hostname()];
  // Each container has a pid namespace of its own: pids of another namespace (another container) are not ours to probe.
  for (const read of [() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), () => readlinkSync("/proc/self/ns/pid")]) {
    try {
      parts.push(read());
    } catch {
      // Not Linux: the host name alone.
    }
  }
  return createHash("sha256").update(parts.join("\n")).digest("hex").slice(0, 12);
}

const HOST = hostIdentity();

/** `h<host>-p<pid>`: this process, for the start of a lease owner or a temp file's name. */
export function processTag(pid = process.pid): string {
  return `h${HOST}-p${pid}`;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const TAG_RE = /(?:^|[.-])h([0-9a-f]{12})-p(\d+)(?=[.-]|$)/;

/**
 * Whether the process `name` carries the tag of is gone: "dead" only for a process of this host that no longer
 * runs, "alive" for one that does, "unknown" for a name of another host or without a tag.
 */
export function makerOf(name: string): "dead" | "alive" | "unknown" {
  const m = TAG_RE.exec(name);
  if (!m || m[1] !== HOST) return "unknown";
  const pid = Number(m[2]);
  return pid === process.pid || processAlive(pid) ? "alive" : "dead";
}
