/**
 * One record per request holds every per-request channel (request-state.ts): the peer lookup, the connection hold,
 * the request id, the CORS choice and the admin session are fields of the same state, and a request nothing
 * recorded keeps the defaults its readers had before.
 */
import { describe, expect, test } from "bun:test";
import type { AdminAuth } from "../../src/http/admin-auth";
import { clientAddress, peerAddress, recordClientAddress } from "../../src/http/client-address";
import { holdConnection, recordConnectionHold, releaseConnection } from "../../src/http/connection-hold";
import { requestIdOf } from "../../src/http/request-log";
import { existingRequestState, requestState } from "../../src/http/request-state";
import { createWebState } from "../../src/http/web-state";
import { corsOf, keepCors } from "../../src/site/http/cors";

describe("request state", () => {
  test("every channel of a request is a field of its one state", () => {
    const request = new Request("http://gantry.test/api/v1/latest", { headers: { "x-forwarded-for": "203.0.113.9" } });
    const calls: string[] = [];
    recordClientAddress(request, () => "10.0.0.1", ["10.0.0.0/8"]);
    recordConnectionHold(request, { hold: () => calls.push("hold"), release: () => calls.push("release") });
    keepCors(request, { "access-control-allow-origin": "*" });
    const id = requestIdOf(request);

    const state = existingRequestState(request)!;
    expect(state).toBe(requestState(request));
    expect(state.requestId).toBe(id);
    expect(state.cors).toEqual({ "access-control-allow-origin": "*" });
    expect(typeof state.start).toBe("number");

    expect(peerAddress(request)).toBe("10.0.0.1");
    expect(clientAddress(request)).toBe("203.0.113.9");
    expect(state.peer).toMatchObject({ peer: "10.0.0.1", client: "203.0.113.9" });
    expect(corsOf(request)).toBe(state.cors!);

    holdConnection(request);
    releaseConnection(request);
    expect(calls).toEqual(["hold", "release"]);
    expect(requestIdOf(request)).toBe(id);
  });

  test("a request nothing recorded reads the defaults and gets no state from reading them", () => {
    const request = new Request("http://gantry.test/healthz");
    expect(peerAddress(request)).toBe("127.0.0.1");
    expect(clientAddress(request)).toBe("127.0.0.1");
    expect(corsOf(request)).toBeUndefined();
    holdConnection(request);
    releaseConnection(request);
    expect(existingRequestState(request)).toBeUndefined();
  });

  test("the admin session is looked up once per request and web state", async () => {
    let lookups = 0;
    const adminAuth = { fingerprint: async () => "f" } as unknown as AdminAuth;
    const store = {
      get: async () => {
        lookups++;
        return null;
      },
    };
    const one = createWebState({ now: () => 0, adminAuth, sessions: store as never });
    const two = createWebState({ now: () => 0, adminAuth, sessions: store as never });
    const request = new Request("http://gantry.test/admin", { headers: { cookie: "gantry_admin=abc" } });
    expect(await one.sessionOf(request)).toBeNull();
    expect(await one.sessionOf(request)).toBeNull();
    expect(lookups).toBe(1);
    expect(await two.sessionOf(request)).toBeNull();
    expect(lookups).toBe(2);
    expect(existingRequestState(request)?.session).toBeDefined();
  });
});
