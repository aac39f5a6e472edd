/**
 * The process's open-file limit, raised to its hard limit at start: every connection is a descriptor, and a soft
 * limit of 1,024 (a common default) is soon reached by clients that hold connections. Bun raises it itself when it
 * starts (checked in tests/reliability/connection-cap.test.ts); this does it again through libc's setrlimit
 * (bun:ffi), so a runtime that stops doing it changes nothing, and says what the limit is.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";

const RLIMIT_NOFILE = 7;

export interface OpenFileLimit {
  soft: number;
  hard: number | "unlimited";
  /** Why the soft limit could not be raised, when it could not. */
  error?: string;
}

/** "Max open files  1024  524288  files" from /proc/self/limits. */
export function parseOpenFileLimit(limits: string): { soft: number; hard: number | "unlimited" } | null {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(limits);
  if (!m) return null;
  const num = (v: string) => (v === "unlimited" ? ("unlimited" as const) : Number(v));
  const soft = num(m[1]);
  return { soft: soft === "unlimited" ? Number.MAX_SAFE_INTEGER : soft, hard: num(m[2]) };
}

function read(): { soft: number; hard: number | "unlimited" } | null {
  try {
    return parseOpenFileLimit(readFileSync("/proc/self/limits", "utf8"));
  } catch {
    return null;
  }
}

export function raiseOpenFileLimit(): OpenFileLimit | null {
  const now = read();
  if (now === null) return null; // not Linux: nothing to say
  if (now.hard === "unlimited" || now.soft >= now.hard) return now;
  try {
    const libc = dlopen("libc.so.6", { setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
    try {
      const limits = new BigUint64Array([BigInt(now.hard), BigInt(now.hard)]);
      if (libc.symbols.setrlimit(RLIMIT_NOFILE, ptr(limits)) !== 0) return { ...now, error: "setrlimit refused" };
    } finally {
      libc.close();
    }
  } catch (err) {
    return { ...now, error: (err as Error).message };
  }
  return read() ?? now;
}
