/**
 * One upstream SSE event larger than GANTRY_MAX_UPSTREAM_EVENT_BYTES is not buffered: the request ends in-band
 * (responses: `response.failed`; chat: an error frame and [DONE]; collected: a 502 with the envelope; raw
 * passthrough: the relayed stream is cut), the ledger says 502 `upstream_stream_error`, and the upstream connection
 * is closed as soon as the bound is passed (the fake upstream wrote only a little more than the bound).
 *
 * Then a `gantry serve` process with the default bound (8 MiB) against an upstream sending one 100 MB event: its
 * peak resident memory (VmHWM) grows by far less than the event (before the bound, such an event took RSS from
 * 70 to 700 MB).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, readSseData, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { gantryCommand, startServe, type ServeProcess } from "./serve-process";

const MiB = 1024 * 1024;
const BOUND = 1 * MiB;
const CHUNK = 64 * 1024;
/** 64 MiB: the whole event, were it read, is 64 times the bound. */
const HUGE = 64 * MiB;

describe("an event over the bound, in process", () => {
  let upstream: FakeUpstream;
  let g: Gantry;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ scenario: { kind: "huge-event", bytes: HUGE, chunkBytes: CHUNK } });
    g = await startGantry({ config: { upstreamUrl: upstream.url, maxUpstreamEventBytes: BOUND } });
  });
  afterAll(async () => {
    await g.stop();
    await upstream.close();
  });

  async function newKey(): Promise<{ key: string; id: string }> {
    const name = `bound-${Math.random().toString(36).slice(2)}`;
    const key = await g.createKey({ name });
    return { key, id: (await g.deps.keys.get(name))!.id };
  }

  /** The upstream stopped being read soon after the bound, its connection closed; the call settled as a stream failure. */
  async function expectCutAndSettled(id: string, writtenBefore: number, ledgerEndpoint: string) {
    await pollUntil(() => upstream.open === 0, Boolean, { what: "the upstream connection to be closed" });
    const written = (upstream.written - writtenBefore) * CHUNK;
    // Written = what Gantry read plus what was in flight in socket buffers when it stopped: far below the event.
    expect(written).toBeLessThan(HUGE / 4);
    expect(g.deps.limiter.inFlight(id)).toBe(0);
    // Settled as the body ends, which may be a moment after the caller saw the stream break (a group commit away).
    const { value: row } = await pollUntil(async () => (await g.deps.ledger.recent(1, id))[0], Boolean, { what: "the cut call's ledger row" });
    expect(row).toMatchObject({ keyId: id, endpoint: ledgerEndpoint, status: 502, errorCode: "upstream_stream_error" });
  }

  test("responses, stream:true: the events so far, then response.failed with upstream_stream_error", async () => {
    const { key, id } = await newKey();
    const before = upstream.written;
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4-mini", input: "hi", stream: true }));
    expect(res.status).toBe(200);
    const events = await readSseData(res);
    expect(events[0].type).toBe("response.created");
    const last = events.at(-1);
    expect(last.type).toBe("response.failed");
    expect(last.response.error.code).toBe("upstream_stream_error");
    expect(last.response.error.message).toContain(`larger than the limit of ${BOUND} bytes`);
    expect(events.some((e) => e.type === "response.completed")).toBe(false);
    await expectCutAndSettled(id, before, "responses");
  });

  test("chat, stream:true: an error frame, then [DONE]", async () => {
    const { key, id } = await newKey();
    const before = upstream.written;
    const res = await fetch(`${g.url}/v1/chat/completions`, authed(key, { model: "gpt-5.4-mini", messages: [{ role: "user", content: "hi" }], stream: true }));
    expect(res.status).toBe(200);
    const frames = await readSseData(res);
    expect(frames.at(-1)).toBe("[DONE]");
    expect(frames.at(-2).error).toMatchObject({ code: "upstream_stream_error" });
    await expectCutAndSettled(id, before, "chat.completions");
  });

  for (const [path, endpoint, body] of [
    ["/v1/responses", "responses", { model: "gpt-5.4-mini", input: "hi" }],
    ["/v1/chat/completions", "chat.completions", { model: "gpt-5.4-mini", messages: [{ role: "user", content: "hi" }] }],
  ] as const) {
    test(`${endpoint}, collected: 502 with the envelope`, async () => {
      const { key, id } = await newKey();
      const before = upstream.written;
      const res = await fetch(`${g.url}${path}`, authed(key, body));
      expect(res.status).toBe(502);
      const { error } = (await res.json()) as any;
      expect(error).toMatchObject({ code: "upstream_stream_error", type: "upstream_error" });
      expect(error.message).toContain(`larger than the limit of ${BOUND} bytes`);
      await expectCutAndSettled(id, before, endpoint);
    });
  }

  test("raw passthrough: the relayed stream is cut, not buffered", async () => {
    const { key, id } = await newKey();
    const before = upstream.written;
    const res = await fetch(
      `${g.url}/v1/responses`,
      authed(key, { model: "gpt-5.4-mini", input: "hi", stream: true, store: false, instructions: "Answer." }, { "x-upstream-mode": "raw" }),
    );
    expect(res.status).toBe(200);
    // The caller sees the upstream's bytes up to the cut, then the stream breaks off (no clean end).
    let received = 0;
    let broke = false;
    try {
      for await (const chunk of res.body!) received += chunk.byteLength;
    } catch {
      broke = true;
    }
    expect(broke).toBe(true);
    expect(received).toBeLessThan(HUGE / 4);
    await expectCutAndSettled(id, before, "responses");
  });
});

describe("an event of 100 MB against `gantry serve` with the default bound", () => {
  let upstream: FakeUpstream;
  let server: ServeProcess;
  let dataDir: string;
  let key: string;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ scenario: { kind: "huge-event", bytes: 100 * 1000 * 1000, chunkBytes: CHUNK } });
    dataDir = mkdtempSync(join(tmpdir(), "gantry-event-bound-"));
    key = JSON.parse(await gantryCommand(["keys", "create", "--name", "event-bound", "--json", "--data-dir", dataDir])).key;
    server = await startServe({ dataDir, upstreamUrl: upstream.url, upstreamKey: "upstream-key-event-bound", adminToken: "gat-reliability-admin-token-event-bound-01" });
  });
  afterAll(async () => {
    server.kill("SIGTERM");
    await server.exited;
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Peak resident memory (VmHWM) in KiB, from /proc. */
  function peakKiB(pid: number): number {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return Number(m![1]);
  }

  test("the caller gets response.failed, and the server's peak memory grows by far less than the event", async () => {
    // A normal call first, so the peak already includes what any request costs.
    upstream.setScenario({ kind: "text", text: "warm" });
    const warm = await fetch(`${server.url}/v1/responses`, authed(key, { model: "gpt-5.4-mini", input: "hi", stream: true }));
    expect(warm.status).toBe(200);
    await warm.text();
    upstream.setScenario({ kind: "huge-event", bytes: 100 * 1000 * 1000, chunkBytes: CHUNK });
    const before = peakKiB(server.pid);

    const res = await fetch(`${server.url}/v1/responses`, authed(key, { model: "gpt-5.4-mini", input: "hi", stream: true }));
    const events = await readSseData(res);
    expect(events.at(-1).type).toBe("response.failed");
    expect(events.at(-1).response.error.code).toBe("upstream_stream_error");
    await pollUntil(() => upstream.open === 0, Boolean, { what: "the upstream connection to be closed" });

    const grewMiB = (peakKiB(server.pid) - before) / 1024;
    console.log(`[event-bound] one 100 MB event: peak RSS grew by ${grewMiB.toFixed(1)} MiB (bound 8 MiB)`);
    expect(grewMiB).toBeLessThan(100);
  }, 30_000);
});
