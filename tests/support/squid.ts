/**
 * A real squid (Debian's /usr/sbin/squid) as a caching reverse proxy in front of one Gantry, for tests of what
 * caches do with our replies. Everything lives in a temporary directory (config, pid, logs); it runs in the
 * foreground (-N) under its own service name, so its shared-memory segments never meet another squid's.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../reliability/serve-process";
import { pollUntil } from "./poll";

export const SQUID_BINARY = "/usr/sbin/squid";

export function squidUnavailable(): string | null {
  return Bun.file(SQUID_BINARY).size > 0 ? null : "squid is not installed (.ci/system-deps installs squid)";
}

export interface Squid {
  /** Base URL of the accelerator: requests here are answered from squid's cache or the origin. */
  url: string;
  stop(): Promise<void>;
}

export async function startSquid(originUrl: string): Promise<Squid> {
  const dir = mkdtempSync(join(tmpdir(), "gantry-squid-"));
  // Squid refuses to run as root and drops to cache_effective_user, which must be able to write its logs here.
  chmodSync(dir, 0o777);
  const port = freePort();
  const origin = new URL(originUrl);
  const asRoot = process.getuid?.() === 0;
  writeFileSync(
    join(dir, "squid.conf"),
    `http_port 127.0.0.1:${port} accel defaultsite=gantry vhost
cache_peer ${origin.hostname} parent ${origin.port} 0 no-query originserver name=gantry
acl local src 127.0.0.1/32
http_access allow local
http_access deny all
cache_peer_access gantry allow all
cache_mem 16 MB
memory_cache_shared off
maximum_object_size_in_memory 1 MB
pid_filename ${dir}/squid.pid
access_log stdio:${dir}/access.log
cache_log ${dir}/cache.log
cache_store_log none
coredump_dir ${dir}
shutdown_lifetime 0 seconds
${asRoot ? "cache_effective_user proxy" : ""}
`,
  );
  const name = `gt${process.pid}x${port}`;
  const proc = Bun.spawn([SQUID_BINARY, "-N", "-n", name, "-f", join(dir, "squid.conf")], { stdout: "ignore", stderr: "pipe" });
  const url = `http://127.0.0.1:${port}`;
  try {
    await pollUntil(() => fetch(`${url}/healthz`).then((r) => r.status, () => 0), (s) => s === 200, { timeoutMs: 20_000, what: "squid answering" });
  } catch (err) {
    proc.kill();
    const log = await Bun.file(join(dir, "cache.log")).text().catch(() => "");
    throw new Error(`${(err as Error).message}\n${log.slice(-2000)}`);
  }
  return {
    url,
    async stop() {
      proc.kill("SIGTERM");
      // A clean stop removes its shared memory; one that hangs is killed.
      await pollUntil(() => proc.exitCode !== null || proc.signalCode !== null, Boolean, { timeoutMs: 10_000, what: "squid stopping" }).catch(() => proc.kill("SIGKILL"));
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
      // Its shared-memory segments (named after the service) stay behind if it died abnormally.
      for (const seg of ["metadata", "queues", "readers"]) rmSync(`/dev/shm/${name}-cf__${seg}.shm`, { force: true });
    },
  };
}
