/**
 * Memory per open stream: a fresh server process (Gantry, then the bare proxy, alternately) relays N streams
 * from the slow upstream mode (a delta a second). RSS is read once the server is warm and idle, and again once
 * all N streams have started and settled; (after - before) / N is the memory each open stream holds.
 *
 * Bun's fetch runs at most 256 upstream requests at a time unless BUN_CONFIG_MAX_HTTP_REQUESTS is set when
 * the process starts, so both servers are started with it raised; a separate probe starts Gantry without it, which
 * `gantry serve` then sets itself (it re-executes itself with it), and checks that every stream starts.
 */
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { rssKb, peakRssKb, resetPeak } from "./proc-stats";
import type { ScenarioResult } from "./report";
import { median, spread } from "./report";
import type { RunOptions } from "./run-pair";
import { RESPONSES_STREAM_BODY } from "./scenarios";
import { BUN, ROOT, createKey, sleep, startBaselineProxy, startGantry, type Proc } from "./servers";

const SLOW_BODY = RESPONSES_STREAM_BODY.replace('"demo-mini"', '"slow-model"');
const RAISED = { BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" };

interface StreamsClient {
  /** Resolves with the number of streams started when all have, or when `timeoutMs` passes. */
  started(timeoutMs: number): Promise<number>;
  failures: string[];
  stop(): Promise<void>;
}

function openStreams(url: string, count: number, headers: string[], cpus: string | null): StreamsClient {
  const cmd = [BUN, join(ROOT, "bench/open-streams.ts"), url, String(count), SLOW_BODY, ...headers];
  const proc = Bun.spawn(cpus ? ["taskset", "-c", cpus, ...cmd] : cmd, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  let opened = 0;
  let all = false;
  const failures: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const [word, n] = line.split(" ");
        if (word === "open" || word === "all") opened = Number(n);
        if (word === "all") all = true;
        if (word === "fail" && failures.length < 5) failures.push(line);
      }
    }
  })();
  return {
    failures,
    async started(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!all && Date.now() < deadline && proc.exitCode === null) await sleep(50);
      return opened;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await reading.catch(() => {});
    },
  };
}

/** A few fast streams through the server so its code is compiled before the idle reading. */
async function warm(proc: Proc, headers: Record<string, string>): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const r = await fetch(proc.url + "/v1/responses", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: RESPONSES_STREAM_BODY });
    await r.text();
  }
}

export async function runOpenStreams(upstreamBase: string, o: RunOptions, res: ScenarioResult): Promise<void> {
  const n = o.streams;
  const dataDir = join(o.workDir, "streams-data");
  mkdirSync(dataDir, { recursive: true });
  const key = await createKey(dataDir, "bench-streams");
  const auth = { authorization: `Bearer ${key}` };
  const perStream: Record<string, number[]> = { gantry: [], "bare-proxy": [] };
  const settleMs = o.quick ? 500 : 2000;
  res.baseline = "bare-proxy";
  res.target = "gantry";

  const start = (which: string, env: Record<string, string | undefined>): Promise<Proc> =>
    which === "gantry"
      ? startGantry(o.workDir, { name: "gantry-streams", dataDir, upstreamBase, logLevel: o.logLevel, cpus: o.serverCpus, env })
      : startBaselineProxy(o.workDir, upstreamBase, o.serverCpus, env);

  for (let i = 0; i < o.runs; i++) {
    for (const which of ["bare-proxy", "gantry"]) {
      const proc = await start(which, RAISED);
      const client = { stop: async () => {} } as Pick<StreamsClient, "stop">;
      try {
        const headers = which === "gantry" ? auth : {};
        await warm(proc, headers);
        await sleep(settleMs);
        const before = rssKb(proc.pid);
        resetPeak(proc.pid);
        const c = openStreams(proc.url + "/v1/responses", n, Object.entries(headers).map(([k, v]) => `${k}: ${v}`), o.loadCpus);
        client.stop = c.stop;
        const opened = await c.started(30_000);
        if (opened < n) throw new Error(`${which}: only ${opened} of ${n} streams started${c.failures.length ? ` (${c.failures.join("; ")})` : ""}`);
        await sleep(settleMs);
        const samples: number[] = [];
        for (let k = 0; k < 3; k++) {
          samples.push(rssKb(proc.pid));
          await sleep(300);
        }
        const after = median(samples);
        perStream[which]!.push((after - before) / n);
        res.values[`${which} RSS idle → ${n} open (MiB), run ${i + 1}`] = `${(before / 1024).toFixed(1)} → ${(after / 1024).toFixed(1)} (peak ${(peakRssKb(proc.pid) / 1024).toFixed(1)})`;
      } finally {
        await client.stop();
        await proc.stop();
      }
    }
  }
  const g = spread(perStream.gantry!);
  const b = spread(perStream["bare-proxy"]!);
  res.values["kib-per-stream"] = g.median;
  res.values["kib-per-stream:spread"] = JSON.stringify(g);
  res.values["bare proxy KiB per stream"] = Math.round(b.median * 10) / 10;
  res.values.summary = `${n} streams: Gantry ${g.median.toFixed(1)} KiB/stream, bare proxy ${b.median.toFixed(1)} KiB/stream`;

  // What an operator gets without the setting: Gantry sets it itself; had it not, Bun would queue beyond 256.
  if (!o.quick && n > 256) {
    const proc = await start("gantry", { BUN_CONFIG_MAX_HTTP_REQUESTS: undefined });
    try {
      await warm(proc, auth);
      const c = openStreams(proc.url + "/v1/responses", n, [`authorization: Bearer ${key}`], o.loadCpus);
      const opened = await c.started(8_000);
      await c.stop();
      res.values["streams started in 8 s without BUN_CONFIG_MAX_HTTP_REQUESTS"] = opened;
      if (opened < n) {
        res.notes.push(
          `Started without BUN_CONFIG_MAX_HTTP_REQUESTS, only ${opened} of ${n} streams started within 8 s: Gantry did not raise Bun's limit of 256 upstream requests itself (its re-execution failed?).`,
        );
      }
    } finally {
      await proc.stop();
    }
  }
}
