/**
 * A real S3 server for tests: Ceph's radosgw from Debian, on a one-monitor, one-OSD cluster kept in memory
 * (memstore), without cephx, in a temporary directory, on 127.0.0.1. Started on first use (about 10 s), shared
 * by the run's test files and stopped by `stopS3` after the last one (tests/support/global-teardown.ts).
 * radosgw checks request signatures and answers ranges and conditional requests as S3 does, which an emulator
 * would not. Without the binaries, `s3Unavailable()` says why.
 */
import { createHash, createHmac } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pollUntil } from "./poll";

const BINARIES = ["/usr/bin/ceph-mon", "/usr/bin/ceph-osd", "/usr/bin/radosgw", "/usr/bin/radosgw-admin", "/usr/bin/monmaptool", "/usr/bin/ceph-authtool", "/usr/bin/ceph"];

export function s3Unavailable(): string | null {
  const missing = BINARIES.filter((b) => !existsSync(b));
  return missing.length ? `Ceph's radosgw is not installed (missing ${missing.join(", ")}; .ci/system-deps installs the Debian packages "radosgw ceph-mon ceph-osd")` : null;
}

export interface S3Server {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Creates a bucket with a fresh name (Bun's S3 client cannot) and returns it. */
  createBucket(): Promise<string>;
}

interface Running extends S3Server {
  stop(): Promise<void>;
}

let server: Promise<Running> | null = null;

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

function run(cmd: string[], what: string): string {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString() || r.stdout.toString()}`);
  return r.stdout.toString();
}

function config(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = v1:127.0.0.1:${monPort}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr2 = false
# No cephx (a test cluster on loopback); crc mode, or clients wait minutes for a handshake that never comes.
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
ms mon client mode = crc
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
osd objectstore = memstore
memstore device bytes = 1073741824
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
pid file = ${dir}/run/$name.pid
keyring = ${dir}/keyring
[mon.a]
mon data = ${dir}/mon
[osd.0]
osd data = ${dir}/osd
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
`;
}

function killFromPidFile(path: string): void {
  try {
    process.kill(Number(readFileSync(path, "utf8").trim()), "SIGKILL");
  } catch {
    // not running
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "gantry-ceph-"));
  for (const sub of ["mon", "osd", "run", "log", "rgw"]) mkdirSync(join(dir, sub));
  const monPort = freePort();
  const rgwPort = freePort();
  const conf = join(dir, "ceph.conf");
  writeFileSync(conf, config(dir, crypto.randomUUID(), monPort, rgwPort));
  const stop = async () => {
    for (const name of ["client.rgw", "osd.0", "mon.a"]) killFromPidFile(join(dir, "run", `${name}.pid`));
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", () => void stop());
  try {
    run(["ceph-authtool", "--create-keyring", join(dir, "keyring"), "--gen-key", "-n", "mon.", "--cap", "mon", "allow *"], "ceph-authtool");
    run(["monmaptool", "--create", "--addv", "a", `[v1:127.0.0.1:${monPort}]`, "--fsid", readFsid(conf), join(dir, "monmap")], "monmaptool");
    run(["ceph-mon", "-c", conf, "--mkfs", "-i", "a", "--monmap", join(dir, "monmap")], "ceph-mon --mkfs");
    run(["ceph-mon", "-c", conf, "-i", "a"], "ceph-mon");
    // The OSD's uuid is chosen here and given to both sides: left to each, the monitor may have recorded another
    // one for osd.0 and refuse the OSD ("wrong fsid").
    const osdUuid = crypto.randomUUID();
    run(["ceph", "-c", conf, "osd", "create", osdUuid, "0"], "ceph osd create");
    run(["ceph-osd", "-c", conf, "-i", "0", "--mkfs", "--osd-uuid", osdUuid], "ceph-osd --mkfs");
    // The monitor must have committed osd.0 with this uuid before the OSD registers, or it may refuse it ("wrong
    // fsid"): wait for the map to say so. Should it still refuse, the OSD is launched again once the refused
    // process is gone.
    const osdKnown = () => {
      const map = JSON.parse(run(["ceph", "-c", conf, "osd", "dump", "-f", "json"], "ceph osd dump"));
      return (map.osds ?? []).some((o: { osd: number; uuid: string }) => o.osd === 0 && o.uuid === osdUuid);
    };
    await pollUntil(osdKnown, Boolean, { timeoutMs: 30_000, stepMs: 100, what: "osd.0 in the monitor's map" });
    const pidFile = join(dir, "run", "osd.0.pid");
    for (let attempt = 1; ; attempt++) {
      try {
        run(["ceph-osd", "-c", conf, "-i", "0"], "ceph-osd");
        break;
      } catch (err) {
        if (attempt >= 8) throw err;
        const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) : 0;
        killFromPidFile(pidFile);
        await pollUntil(() => pid === 0 || !isAlive(pid), Boolean, { timeoutMs: 10_000, stepMs: 50, what: "the refused ceph-osd gone" });
        console.warn(`ceph-osd refused (attempt ${attempt}), launching it again`);
      }
    }
    await pollUntil(() => JSON.parse(run(["ceph", "-c", conf, "osd", "stat", "-f", "json"], "ceph osd stat")).num_up_osds, (n) => n >= 1, {
      timeoutMs: 60_000, stepMs: 200, what: "the OSD up",
    });
    run(["radosgw", "-c", conf, "-n", "client.rgw"], "radosgw");
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    await pollUntil(() => fetch(endpoint).then((r) => r.status, () => 0), (s) => s === 200, { timeoutMs: 90_000, stepMs: 200, what: "radosgw answering" });
    const accessKeyId = "GANTRYTEST" + Math.random().toString(36).slice(2, 10).toUpperCase();
    const secretAccessKey = crypto.randomUUID();
    run(["radosgw-admin", "-c", conf, "user", "create", "--uid", "gantry", "--display-name", "gantry", "--access-key", accessKeyId, "--secret", secretAccessKey], "radosgw-admin user create");
    const region = "us-east-1";
    // The first object written creates the cluster's data pools (seconds): done here, not in a test's time.
    await signedRequest("PUT", endpoint, "/gantry-warm-up", { region, accessKeyId, secretAccessKey });
    await new Bun.S3Client({ bucket: "gantry-warm-up", endpoint, region, accessKeyId, secretAccessKey }).file("warm-up").write("warm");
    let buckets = 0;
    return {
      endpoint,
      region,
      accessKeyId,
      secretAccessKey,
      async createBucket() {
        const name = `gantry-test-${process.pid}-${++buckets}`;
        await signedRequest("PUT", endpoint, `/${name}`, { region, accessKeyId, secretAccessKey });
        return name;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function readFsid(conf: string): string {
  return /fsid = (\S+)/.exec(readFileSync(conf, "utf8"))![1]!;
}

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");
const hmac = (key: Buffer | string, s: string) => createHmac("sha256", key).update(s).digest();

/** One AWS Signature V4 request with an empty body (for what Bun's client cannot do: creating a bucket). */
async function signedRequest(method: string, endpoint: string, path: string, creds: { region: string; accessKeyId: string; secretAccessKey: string }): Promise<void> {
  const host = new URL(endpoint).host;
  const amzDate = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+/, "");
  const day = amzDate.slice(0, 8);
  const payload = sha256Hex("");
  const signed = "host;x-amz-content-sha256;x-amz-date";
  const canonical = [method, path, "", `host:${host}`, `x-amz-content-sha256:${payload}`, `x-amz-date:${amzDate}`, "", signed, payload].join("\n");
  const scope = `${day}/${creds.region}/s3/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, day), creds.region), "s3"), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  const res = await fetch(endpoint + path, {
    method,
    headers: {
      "x-amz-date": amzDate,
      "x-amz-content-sha256": payload,
      authorization: `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}`,
    },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} on S3: ${res.status} ${text.slice(0, 300)}`);
}

/** The run's S3 server (started on first call). */
export async function s3Server(): Promise<S3Server> {
  const unavailable = s3Unavailable();
  if (unavailable) throw new Error(`cannot start S3 for this test: ${unavailable}`);
  // One more try on a fresh directory and fresh ports if the first start fails (a port taken in between).
  server ??= start().catch((err) => {
    console.warn(`S3 (Ceph) did not start, trying once more: ${(err as Error).message}`);
    return start();
  });
  return server;
}

export async function stopS3(): Promise<void> {
  const s = server;
  server = null;
  if (s) await (await s.catch(() => null))?.stop();
}
