import { expect, test } from "bun:test";
import { overCap, parseTcpTable } from "../../src/http/rules/tcp-table";

const HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
// Port 8080 = 1F90. 127.0.0.2 = 0200007F. State 01 established, 0A listen, 06 time-wait.
const V4 = [
  HEADER,
  "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 100 1 0000000000000000 100 0 0 10 0",
  "   1: 0100007F:1F90 0200007F:A001 01 00000000:00000000 00:00000000 00000000  1000        0 205 1 0000000000000000 20 4 30 10 -1",
  "   2: 0100007F:1F90 0200007F:A002 01 00000000:00000000 00:00000000 00000000  1000        0 201 1 0000000000000000 20 4 30 10 -1",
  "   3: 0100007F:1F90 0200007F:A003 08 00000000:00000000 00:00000000 00000000  1000        0 203 1 0000000000000000 20 4 30 10 -1",
  "   4: 0100007F:1F90 0200007F:A004 06 00000000:00000000 03:00000F00 00000000     0        0 0 3 0000000000000000",
  "   5: 0100007F:1F90 0100007F:B001 01 00000000:00000000 00:00000000 00000000  1000        0 300 1 0000000000000000 20 4 30 10 -1",
  "   6: 0100007F:B002 0200007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 301 1 0000000000000000 20 4 30 10 -1",
].join("\n");
// ::ffff:10.0.0.5 and 2001:db8::1, 2001:db8::2 (same /64), to port 8080.
const V6 = [
  HEADER,
  "   0: 00000000000000000000000000000000:1F90 0000000000000000FFFF00000500000A:C001 01 00000000:00000000 00:00000000 00000000  1000        0 400 1 0",
  "   1: 00000000000000000000000000000000:1F90 B80D0120000000000000000001000000:C002 01 00000000:00000000 00:00000000 00000000  1000        0 401 1 0",
  "   2: 00000000000000000000000000000000:1F90 B80D0120000000000000000002000000:C003 01 00000000:00000000 00:00000000 00000000  1000        0 402 1 0",
].join("\n");

test("the table's connections: listeners and time-wait left out, IPv4 from its little-endian words", () => {
  expect(parseTcpTable(V4)).toEqual([
    { peer: "127.0.0.2", address: "127.0.0.2", localPort: 8080, inode: 205 },
    { peer: "127.0.0.2", address: "127.0.0.2", localPort: 8080, inode: 201 },
    { peer: "127.0.0.2", address: "127.0.0.2", localPort: 8080, inode: 203 },
    { peer: "127.0.0.1", address: "127.0.0.1", localPort: 8080, inode: 300 },
    { peer: "127.0.0.2", address: "127.0.0.2", localPort: 45058, inode: 301 },
  ]);
});

test("with a port, only the lines naming it are read (the same connections to it)", () => {
  const all = parseTcpTable(V4);
  expect(parseTcpTable(V4, 8080)).toEqual(all.filter((c) => c.localPort === 8080 || c.inode === 301));
  expect(parseTcpTable(V4, 9090)).toEqual([]);
});

test("IPv6: mapped IPv4 counts as IPv4, other addresses by their /64", () => {
  expect(parseTcpTable(V6)).toEqual([
    { peer: "10.0.0.5", address: "10.0.0.5", localPort: 8080, inode: 400 },
    { peer: "2001:db8:0:0:0:0:0:1", address: "2001:db8:0:0::/64", localPort: 8080, inode: 401 },
    { peer: "2001:db8:0:0:0:0:0:2", address: "2001:db8:0:0::/64", localPort: 8080, inode: 402 },
  ]);
});

test("over the cap: the newest connections beyond it, per address, on the listener's port only; exempt peers not counted", () => {
  const all = [...parseTcpTable(V4), ...parseTcpTable(V6)];
  const none = () => false;
  expect(overCap(all, { port: 8080, cap: 1, exempt: none })).toEqual(
    new Map([
      ["127.0.0.2", { held: 3, cut: [203, 205] }],
      ["2001:db8:0:0::/64", { held: 2, cut: [402] }],
    ]),
  );
  expect(overCap(all, { port: 8080, cap: 3, exempt: none }).size).toBe(0);
  expect(overCap(all, { port: 8080, cap: 1, exempt: (p) => p === "127.0.0.2" || p.startsWith("2001:db8:") }).size).toBe(0);
  expect(overCap(all, { port: 9090, cap: 0, exempt: none }).size).toBe(0);
});
