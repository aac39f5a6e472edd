/** Recorded-style Responses streams in tests/fixtures/responses, shared by every test that needs upstream output. */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createSseDecoder, parseStreamEvent, type SseEvent } from "../../src/gateway/wire/sse-decode";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import type { HeartbeatRecord, MergedHeartbeat } from "../../src/site/heartbeats/rules/heartbeat-input";

const DIR = join(import.meta.dir, "..", "fixtures", "responses");

export const FIXTURE_NAMES = [
  "text",
  "parallel-tools",
  "reasoning-then-call",
  "empty-output-completed",
  "incomplete-max-tokens",
  "error-nested",
  "error-flat",
  "crlf-text",
] as const;

/** The raw SSE text of a fixture; the name may omit ".sse". */
export function loadFixture(name: string): string {
  return readFileSync(join(DIR, name.endsWith(".sse") ? name : `${name}.sse`), "utf8");
}

/** The fixture's stream events in order, decoded with the gateway's own decoder; a `[DONE]` is left out. */
export function fixtureEvents(name: string): ResponsesStreamEvent[] {
  const decoder = createSseDecoder();
  const sse = [...decoder.push(loadFixture(name)), ...decoder.end()];
  const events: ResponsesStreamEvent[] = [];
  for (const e of sse) {
    const ev = parseStreamEvent(e);
    if (ev !== "done") events.push(ev);
  }
  return events;
}

/** Decodes a stream delivered in the given chunks, then ended: what every chunking test compares. */
export function decodeChunks(chunks: Array<Uint8Array | string>): SseEvent[] {
  const d = createSseDecoder();
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...d.push(c));
  events.push(...d.end());
  return events;
}

/** A heartbeat as parsed: every optional field unsent (null) unless given. */
export function heartbeatRecord(clientId: string, at = 1, over: Partial<HeartbeatRecord> = {}): HeartbeatRecord {
  return { clientId, at, app: null, version: null, platform: null, arch: null, runtime: null, locale: null, ...over };
}

/** The same after merging (what the journal stores): one report first seen at `at`, unless `over` says otherwise. */
export function mergedHeartbeat(clientId: string, at: number, over: Partial<MergedHeartbeat> = {}): MergedHeartbeat {
  return { ...heartbeatRecord(clientId, at), firstAt: at, count: 1, ...over };
}
