/**
 * An upload to the back office that does not arrive whole: a client that hangs up mid-body, or a body that is
 * not the size it declared. Neither is a server fault: no 500, no "unhandled error" in the log, nothing left in
 * the mirror, and the server goes on serving.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { startGantry, TEST_ADMIN_TOKEN, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry({ captureLogs: true });
  const created = await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "1.0.0" }) });
  expect(created.status).toBe(201);
});
afterAll(() => g.stop());

const requestLines = () => g.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request" || l.level === "error");
const tempFiles = () => {
  try {
    return readdirSync(join(g.config.dataDir, "mirror", ".tmp"));
  } catch {
    return [];
  }
};

test("a client that hangs up mid-upload: logged as the client's doing, nothing kept, the server still serves", async () => {
  const { port } = new URL(g.url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    "PUT /admin/api/releases/1.0.0/assets/Gantry-1.0.0-x64-setup.exe HTTP/1.1\r\n" +
      `Host: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\n` +
      "Content-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n" +
      "x".repeat(100),
  );
  // The server has started reading the body (a temporary file exists) before the client goes away.
  await pollUntil(tempFiles, (files) => files.length > 0, { what: "the upload's temporary file" });
  socket.destroy();

  const { value: lines } = await pollUntil(
    () => requestLines().filter((l) => String(l.path ?? l.route ?? "").includes("/assets/") || l.level === "error"),
    (ls) => ls.length > 0,
    { what: "the upload's log line" },
  );
  expect(lines.filter((l) => l.level === "error")).toEqual([]);
  expect(lines[0].status).toBe(499);
  await pollUntil(tempFiles, (files) => files.length === 0, { what: "the temporary file to be removed" });
  const release = await (await g.admin("/admin/api/releases/1.0.0")).json();
  expect(release.assets).toEqual([]);
  expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
});
