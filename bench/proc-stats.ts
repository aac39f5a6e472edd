/**
 * What a server process costs, read from /proc: CPU time (utime + stime of all its threads, from /proc/<pid>/stat)
 * and memory (VmRSS now, VmHWM = peak since start or since the last resetPeak).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
} catch {
  // 100 is the Linux default
}

function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  // fields[0] is field 3 (state); utime, stime, cutime, cstime are fields 14 to 17.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU seconds used so far by the process (all threads). */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

/**
 * CPU seconds used so far by the process and all its descendants: the living ones counted one by one, the ended
 * ones through the parent's cutime/cstime (PostgreSQL's backends and autovacuum workers come and go during a run).
 */
export function treeCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  let total = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / clockTicks;
  for (const child of childPids(pid)) {
    try {
      total += treeCpuSeconds(child);
    } catch {
      // Ended meanwhile: the parent's cutime has it once it is reaped.
    }
  }
  return total;
}

function statusKb(pid: number, name: string): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
  return m ? Number(m[1]) : 0;
}

/** Resident set size now, in KiB. */
export function rssKb(pid: number): number {
  return statusKb(pid, "VmRSS");
}

/** Peak resident set size (since start, or since resetPeak), in KiB. */
export function peakRssKb(pid: number): number {
  return statusKb(pid, "VmHWM");
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0: "5" > clear_refs). Returns false where not allowed. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Worker processes of an nginx master (the ones that serve requests). */
export function childPids(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

export interface Usage {
  cpuSeconds: number;
  peakRssKb: number;
}

/** Starts measuring a set of processes; `stop()` gives CPU used since the start and the highest peak RSS. */
export function measure(pids: number[]): { stop(): Usage } {
  const resettable = pids.map((p) => resetPeak(p));
  const before = pids.map(treeCpuSeconds);
  return {
    stop() {
      const cpu = pids.reduce((sum, p, i) => {
        try {
          return sum + treeCpuSeconds(p) - before[i];
        } catch {
          return sum; // the process ended during the run
        }
      }, 0);
      const peak = Math.max(...pids.map((p, i) => (resettable[i] ? peakRssKb(p) : rssKb(p))));
      return { cpuSeconds: cpu, peakRssKb: peak };
    },
  };
}
