/**
 * At most GANTRY_MAX_CONNECTIONS_PER_ADDRESS connections from one client address, so that one client cannot take
 * every descriptor the process has (partial requests are cut after the idle timeout, but enough of them re-opened
 * held the listener out of descriptors, /healthz included).
 *
 * Bun.serve tells nothing when a connection is accepted, and a connection that never completes a request never
 * reaches Gantry's code. So the cap is kept from outside: the kernel's table of TCP sockets (/proc/net/tcp, or tcp6
 * for an IPv6 listener) is read every second (every tenth of one while some address is over its cap; less often
 * when reading it costs more than 2% of the time; not at all while the process has fewer descriptors than the cap
 * allows one address), and the newest connections of an address beyond the cap are ended with shutdown(2)
 * (socket-shutdown.ts). Only this process's sockets are touched:
 * an inode is ended only if one of its descriptors names it. Trusted proxies are not capped (their clients are many
 * behind one address, and a TCP connection has no forwarded address to count instead).
 *
 * Reading /proc needs a descriptor of its own, exactly when descriptors run out: two are held in reserve and let go
 * for the read.
 */
import { closeSync, openSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { overCap, parseTcpTable, type TcpConnection } from "./rules/tcp-table";
import type { ShutdownSocket } from "./socket-shutdown";

export interface ConnectionCapOptions {
  port: number;
  /** The tables the listener's connections are in: tcp for IPv4, tcp6 for IPv6 (mapped IPv4 clients included). */
  tables: ReadonlyArray<"tcp" | "tcp6">;
  cap: number;
  exempt: (peer: string) => boolean;
  shutdown: ShutdownSocket;
  /** Told once a round for each address over its cap. */
  onCut: (address: string, held: number, cut: number) => void;
  everyMs?: number;
  busyEveryMs?: number;
}

/** The table's text is made by the kernel for every socket of the namespace: tens of ms for a few thousand. */
function readTables(tables: ReadonlyArray<"tcp" | "tcp6">, port: number): TcpConnection[] {
  return tables.flatMap((t) => parseTcpTable(readFileSync(`/proc/self/net/${t}`, "latin1"), port));
}

/** Open descriptors: a cheap count that says whether any address can be over the cap at all. */
function descriptorCount(): number {
  return readdirSync("/proc/self/fd").length;
}

/** inode -> descriptor, for this process's sockets among `wanted`. */
function ownDescriptors(wanted: ReadonlySet<number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${name}`);
    } catch {
      continue; // closed meanwhile
    }
    if (!target.startsWith("socket:[")) continue;
    const inode = Number(target.slice(8, -1));
    if (wanted.has(inode)) out.set(inode, Number(name));
  }
  return out;
}

export function startConnectionCap(opts: ConnectionCapOptions): { stop(): void; check(): number } {
  const everyMs = opts.everyMs ?? 1000;
  const busyEveryMs = opts.busyEveryMs ?? 100;
  let reserve: number[] = [];
  const takeReserve = () => {
    try {
      while (reserve.length < 2) reserve.push(openSync("/dev/null", "r"));
    } catch {
      // Out of descriptors right now: taken again after the next round.
    }
  };
  const freeReserve = () => {
    for (const fd of reserve) closeSync(fd);
    reserve = [];
  };

  /** One round: ends what is over the cap; returns how many connections it ended. */
  const check = (): number => {
    freeReserve();
    try {
      // No address can hold more than the cap while the process has fewer descriptors than that: the table, the
      // costly part, is read only past it.
      if (descriptorCount() <= opts.cap) return 0;
      const over = overCap(readTables(opts.tables, opts.port), { port: opts.port, cap: opts.cap, exempt: opts.exempt });
      if (over.size === 0) return 0;
      const fds = ownDescriptors(new Set([...over.values()].flatMap((o) => o.cut)));
      let ended = 0;
      for (const [address, { held, cut }] of over) {
        let here = 0;
        for (const inode of cut) {
          const fd = fds.get(inode);
          if (fd !== undefined && opts.shutdown(fd)) here++;
        }
        if (here > 0) opts.onCut(address, held, here);
        ended += here;
      }
      return ended;
    } finally {
      takeReserve();
    }
  };

  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  const round = () => {
    timer = null;
    if (stopped) return;
    let ended = 0;
    const started = performance.now();
    try {
      ended = check();
    } catch {
      // /proc unreadable this once: tried again next round.
    }
    // A round blocks the event loop while the kernel writes its table: at most about 2% of the time goes to it.
    const cost = performance.now() - started;
    timer = setTimeout(round, Math.max(ended > 0 ? busyEveryMs : everyMs, cost * 50));
    timer.unref?.();
  };
  takeReserve();
  timer = setTimeout(round, everyMs);
  timer.unref?.();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      freeReserve();
    },
    check,
  };
}
