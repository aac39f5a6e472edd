import { describe, expect, test } from "bun:test";
import { createLogger, textLogs } from "../../src/log";
import { changedSettings, defaultConfig } from "../../src/config";
import { requestLog } from "../../src/http/request-log";

const capture = (level: "debug" | "info" = "debug") => {
  const lines: string[] = [];
  return { lines, log: createLogger(level, (l) => lines.push(l), false) };
};

describe("log lines", () => {
  test("members() writes the line the level methods write for the same fields", () => {
    const { lines, log } = capture();
    log.info("request", { requestId: "req_1", route: "/api/v1/latest", method: "GET", status: 200, durationMs: 0.4 });
    log.members("info", "request", '"requestId":"req_1","route":"/api/v1/latest","method":"GET","status":200,"durationMs":0.4');
    const [a, b] = lines.map((l) => JSON.parse(l));
    expect(b).toEqual({ ...a, time: b.time });
    log.members("warn", 'say "hi"', "");
    expect(JSON.parse(lines[2])).toMatchObject({ level: "warn", msg: 'say "hi"' });
  });

  test("members() respects the level", () => {
    const { lines, log } = capture("info");
    log.members("debug", "request", '"a":1');
    expect(lines).toEqual([]);
  });

  test("the request line: id, route template, method, status and duration, parseable JSON; quiet routes at debug, self-logged routes not at all", () => {
    const { lines, log } = capture();
    const { record } = requestLog({ log });
    const request = new Request("http://x/api/v1/latest", { headers: { "x-request-id": "caller-id.1" } });
    record(request, "/api/v1/latest", 304, performance.now() - 2);
    record(new Request("http://x/healthz"), "/healthz", 200);
    record(new Request("http://x/v1/models"), "/v1/models", 200);
    record(new Request("http://x/odd", { method: "PROPFIND" }), 'odd "route"', 404);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed).toHaveLength(3);
    expect(parsed[0]).toMatchObject({ level: "info", msg: "request", requestId: "caller-id.1", route: "/api/v1/latest", method: "GET", status: 304 });
    expect(parsed[0].durationMs).toBeGreaterThanOrEqual(2);
    expect(parsed[1]).toMatchObject({ level: "debug", route: "/healthz" });
    expect(parsed[1].requestId).toMatch(/^req_/);
    expect(parsed[2]).toMatchObject({ route: 'odd "route"', method: "OTHER", status: 404 });
  });
});

describe("bounded log values", () => {
  test("every field of a line is cut to MAX_LOGGED_CHARS, strings and objects alike; short fields go as they are", async () => {
    const { MAX_LOGGED_CHARS } = await import("../../src/log");
    const { lines, log } = capture();
    const long = "x".repeat(1024 * 1024);
    log.warn("refused", { model: long, detail: { body: long }, keyId: "k1", n: 3 });
    expect(lines[0]!.length).toBeLessThan(2 * MAX_LOGGED_CHARS + 200);
    const parsed = JSON.parse(lines[0]!);
    expect(parsed.model.startsWith("x".repeat(MAX_LOGGED_CHARS))).toBe(true);
    expect(parsed.model).toContain(`(${1024 * 1024 - MAX_LOGGED_CHARS} more chars)`);
    expect(typeof parsed.detail).toBe("string");
    expect(parsed).toMatchObject({ keyId: "k1", n: 3 });
    const pretty: string[] = [];
    createLogger("debug", (l) => pretty.push(l), true).error("x", { model: long });
    expect(pretty[0]!.length).toBeLessThan(MAX_LOGGED_CHARS + 200);
  });
});

describe("log formats", () => {
  test("auto is text on a terminal only; json and text are what they say", () => {
    expect([textLogs("auto", true), textLogs("auto", false), textLogs("json", true), textLogs("text", false)]).toEqual([true, false, false, true]);
  });

  test("a text line: time of day in UTC, level, message, fields as key=value (strings bare, the rest JSON, undefined left out)", () => {
    const lines: string[] = [];
    const log = createLogger("info", (l) => lines.push(l), true);
    log.warn("upstream refused", { status: 401, route: "/v1/responses", detail: undefined, extra: { a: 1 } });
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\dZ WARN  upstream refused status=401 route=\/v1\/responses extra=\{"a":1\}$/);
  });

  test("the text start-up line lists only changed settings, redacted", () => {
    const shown = changedSettings(defaultConfig({ port: 9001, adminToken: "an-admin-token-of-30-characters" }));
    expect(Object.keys(shown)).toEqual(["port", "adminToken"]);
    expect(String(shown.adminToken)).not.toContain("admin-token");
  });
});
