import { describe, expect, test } from "bun:test";
import { isTrustedPeer, parseIp } from "../../src/rules/ip-ranges";
import { isLoopbackName, publicBaseUrl, resolvePublicBaseUrl, validHost, type PublicUrlInput } from "../../src/http/public-url";
import { recordClientAddress } from "../../src/http/client-address";

const cfg = (over: { publicUrl?: string; trustedProxies?: string[] } = {}) => ({ publicUrl: "", trustedProxies: [], ...over });
const req = (over: Partial<PublicUrlInput>): PublicUrlInput => ({
  host: null,
  requestUrl: "http://127.0.0.1:8080/api/v1/latest",
  forwardedHost: null,
  forwardedProto: null,
  peer: "127.0.0.1",
  ...over,
});

describe("resolvePublicBaseUrl: scheme by host", () => {
  const cases: Array<[string, string]> = [
    ["updates.example.com", "https://updates.example.com"],
    ["Updates.Example.COM:8443", "https://updates.example.com:8443"],
    ["localhost", "http://localhost"],
    ["localhost:8080", "http://localhost:8080"],
    ["app.localhost:3000", "http://app.localhost:3000"],
    ["127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["127.45.6.7", "http://127.45.6.7"],
    ["[::1]:8080", "http://[::1]:8080"],
    // IP literals and single-label names keep the connection's scheme (http here).
    ["192.168.1.20:8080", "http://192.168.1.20:8080"],
    ["203.0.113.9", "http://203.0.113.9"],
    ["[2001:db8::1]:8080", "http://[2001:db8::1]:8080"],
    ["gantry:8080", "http://gantry:8080"],
  ];
  for (const [host, expected] of cases) {
    test(`${host} -> ${expected}`, () => {
      expect(resolvePublicBaseUrl(req({ host }), cfg())).toBe(expected);
    });
  }

  test("an IP literal reached over TLS stays https", () => {
    expect(resolvePublicBaseUrl(req({ host: "203.0.113.9", requestUrl: "https://203.0.113.9/x" }), cfg())).toBe("https://203.0.113.9");
  });

  test("a junk Host header falls back to the request URL's host", () => {
    expect(resolvePublicBaseUrl(req({ host: "evil.com/path?x" }), cfg())).toBe("http://127.0.0.1:8080");
    expect(resolvePublicBaseUrl(req({ host: "a b" }), cfg())).toBe("http://127.0.0.1:8080");
    expect(resolvePublicBaseUrl(req({ host: "user@evil.com" }), cfg())).toBe("http://127.0.0.1:8080");
  });
});

describe("resolvePublicBaseUrl: forwarded headers and the override", () => {
  const forwarded = { host: "127.0.0.1:8080", forwardedHost: "cdn.example.com", forwardedProto: "https" };

  test("ignored from an untrusted peer", () => {
    expect(resolvePublicBaseUrl(req({ ...forwarded, peer: "198.51.100.7" }), cfg())).toBe("http://127.0.0.1:8080");
    expect(resolvePublicBaseUrl(req({ ...forwarded, peer: "198.51.100.7" }), cfg({ trustedProxies: ["10.0.0.0/8"] }))).toBe("http://127.0.0.1:8080");
  });

  test("honoured from a trusted peer (address, CIDR, IPv6, IPv4-mapped)", () => {
    expect(resolvePublicBaseUrl(req({ ...forwarded, peer: "10.1.2.3" }), cfg({ trustedProxies: ["10.0.0.0/8"] }))).toBe("https://cdn.example.com");
    expect(resolvePublicBaseUrl(req({ ...forwarded, peer: "::ffff:10.1.2.3" }), cfg({ trustedProxies: ["10.1.2.3"] }))).toBe("https://cdn.example.com");
    expect(resolvePublicBaseUrl(req({ ...forwarded, peer: "fd00::5" }), cfg({ trustedProxies: ["fd00::/8"] }))).toBe("https://cdn.example.com");
  });

  test("a trusted proxy may say http; the first list entry counts; junk is refused", () => {
    const t = cfg({ trustedProxies: ["127.0.0.1"] });
    expect(resolvePublicBaseUrl(req({ forwardedHost: "updates.example.com", forwardedProto: "http" }), t)).toBe("http://updates.example.com");
    expect(resolvePublicBaseUrl(req({ forwardedHost: "a.example.com, b.example.com", forwardedProto: "https, http" }), t)).toBe("https://a.example.com");
    expect(resolvePublicBaseUrl(req({ host: "updates.example.com", forwardedProto: "gopher" }), t)).toBe("https://updates.example.com");
    expect(resolvePublicBaseUrl(req({ host: "updates.example.com", forwardedHost: "bad host/x" }), t)).toBe("https://updates.example.com");
  });

  test("GANTRY_PUBLIC_URL wins over everything", () => {
    const c = cfg({ publicUrl: "https://dl.example.org/updates/", trustedProxies: ["127.0.0.1"] });
    expect(resolvePublicBaseUrl(req({ host: "localhost", forwardedHost: "x.example.com" }), c)).toBe("https://dl.example.org/updates");
  });
});

describe("address helpers", () => {
  test("parseIp", () => {
    expect(parseIp("10.0.0.1")).toEqual({ kind: 4, value: 0x0a000001n });
    expect(parseIp("::1")).toEqual({ kind: 6, value: 1n });
    expect(parseIp("::ffff:127.0.0.1")).toEqual({ kind: 4, value: 0x7f000001n });
    expect(parseIp("2001:db8::")?.kind).toBe(6);
    for (const bad of ["256.0.0.1", "1.2.3", "1::2::3", "example.com", "", "1.2.3.4.5", "12345::"]) expect(parseIp(bad)).toBeNull();
  });

  test("isTrustedPeer", () => {
    expect(isTrustedPeer("192.168.5.5", ["192.168.0.0/16"])).toBe(true);
    expect(isTrustedPeer("192.169.5.5", ["192.168.0.0/16"])).toBe(false);
    expect(isTrustedPeer("10.0.0.1", ["10.0.0.1/33"])).toBe(false);
    expect(isTrustedPeer("10.0.0.1", ["0.0.0.0/0"])).toBe(true);
    expect(isTrustedPeer("::1", ["127.0.0.1"])).toBe(false);
    expect(isTrustedPeer("not-an-ip", ["0.0.0.0/0"])).toBe(false);
  });

  test("isLoopbackName and validHost", () => {
    expect(isLoopbackName("localhost")).toBe(true);
    expect(isLoopbackName("127.255.0.1")).toBe(true);
    expect(isLoopbackName("::1")).toBe(true);
    expect(isLoopbackName("128.0.0.1")).toBe(false);
    expect(isLoopbackName("localhost.example.com")).toBe(false);
    expect(validHost("example.com:65535")).toBe("example.com:65535");
    expect(validHost("example.com:65536")).toBeNull();
    expect(validHost("[::1]:80")).toBe("[::1]:80");
    expect(validHost("[zz::1]")).toBeNull();
    expect(validHost("exa\"mple.com")).toBeNull();
  });
});

describe("publicBaseUrl: the kept answers are the answers resolvePublicBaseUrl gives", () => {
  const request = (url: string, headers: Record<string, string>, peer = "127.0.0.1") => {
    const r = new Request(url, { headers });
    recordClientAddress(r, () => peer);
    return r;
  };

  test("no trusted proxy: forwarding headers never count, whoever sends them, and each Host and scheme has its own answer", () => {
    const config = cfg();
    expect(publicBaseUrl(request("http://127.0.0.1:8080/x", { host: "a.example.com" }), config)).toBe("https://a.example.com");
    expect(publicBaseUrl(request("http://127.0.0.1:8080/x", { host: "a.example.com", "x-forwarded-host": "evil.example" }), config)).toBe("https://a.example.com");
    expect(publicBaseUrl(request("http://127.0.0.1:8080/x", { host: "gantry:8080" }), config)).toBe("http://gantry:8080");
    expect(publicBaseUrl(request("https://127.0.0.1:8080/x", { host: "gantry:8080" }), config)).toBe("https://gantry:8080");
    expect(publicBaseUrl(request("http://127.0.0.1:8080/x", { host: "gantry:8080" }), config)).toBe("http://gantry:8080");
  });

  test("a trusted proxy's forwarding headers count, another peer's do not, and neither is kept for the next request", () => {
    const config = cfg({ trustedProxies: ["10.0.0.0/8"] });
    const forwarded = { host: "internal:8080", "x-forwarded-host": "updates.example.com", "x-forwarded-proto": "https" };
    expect(publicBaseUrl(request("http://10.0.0.1:8080/x", forwarded, "10.0.0.5"), config)).toBe("https://updates.example.com");
    expect(publicBaseUrl(request("http://10.0.0.1:8080/x", forwarded, "192.0.2.1"), config)).toBe("http://internal:8080");
    expect(publicBaseUrl(request("http://10.0.0.1:8080/x", { host: "internal:8080" }, "10.0.0.5"), config)).toBe("http://internal:8080");
  });

  test("GANTRY_PUBLIC_URL wins, without its trailing slashes", () => {
    const config = cfg({ publicUrl: "https://dl.example.com/gantry/" });
    expect(publicBaseUrl(request("http://127.0.0.1:8080/x", { host: "a.example.com" }), config)).toBe("https://dl.example.com/gantry");
  });
});
