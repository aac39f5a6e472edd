/** Which addresses the site may fetch from (fetch-guard.ts): public ones, and hosts the operator lists. */
import { describe, expect, test } from "bun:test";
import { checkDestination, DestinationRefused, isPublicAddress } from "../../src/site/fetch/fetch-guard";

describe("isPublicAddress", () => {
  test("loopback, private, link-local, metadata, unique-local and unspecified addresses are not public", () => {
    const internal = [
      "127.0.0.1", "127.255.255.254", "0.0.0.0", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254",
      "100.64.0.1", "224.0.0.1", "255.255.255.255", "::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
      // IPv4 inside IPv6: mapped, compatible, NAT64 and 6to4.
      "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::10.0.0.1", "2002:a00:1::",
      "not an address",
    ];
    expect(internal.filter(isPublicAddress)).toEqual([]);
  });

  test("public addresses are", () => {
    const open = ["8.8.8.8", "1.1.1.1", "172.32.0.1", "172.15.255.255", "192.169.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8"];
    expect(open.filter((a) => !isPublicAddress(a))).toEqual([]);
  });
});

describe("checkDestination", () => {
  const resolveTo = (addresses: string[]) => async () => addresses;
  const check = (url: string, addresses: string[], allowedHosts: string[] = []) => checkDestination(new URL(url), { allowedHosts, resolve: resolveTo(addresses) });

  test("a name is refused when any of its addresses is internal", async () => {
    await expect(check("https://files.example.com/a", ["93.184.216.34"])).resolves.toBeUndefined();
    await expect(check("https://files.example.com/a", ["93.184.216.34", "10.0.0.5"])).rejects.toBeInstanceOf(DestinationRefused);
    await expect(check("https://files.example.com/a", [])).rejects.toBeInstanceOf(DestinationRefused);
  });

  test("a listed host, or a listed address, is let through; the refusal names only the host", async () => {
    await expect(check("http://Files.Internal:8080/a", ["10.0.0.5"], ["files.internal"])).resolves.toBeUndefined();
    await expect(check("http://files.internal/a", ["10.0.0.5"], ["10.0.0.5"])).resolves.toBeUndefined();
    await expect(check("http://[::1]:9/a", [], ["::1"])).resolves.toBeUndefined();
    const refused = await check("http://files.internal:8080/a", ["10.0.0.5"]).catch((e) => e);
    expect(refused.message).toBe("cannot reach files.internal:8080");
    expect(refused.reason).toContain("10.0.0.5");
  });
});
