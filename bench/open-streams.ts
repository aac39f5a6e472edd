/**
 * The client of the open-streams scenario, run as its own process:
 *   bun bench/open-streams.ts URL COUNT JSON_BODY [HEADER: VALUE ...]
 * Opens COUNT HTTP/1.1 connections (plain sockets: no client-side pool limit) and POSTs the body on each. Prints
 * `open N` each time more streams have started (status 200 and their first event received), `all N` once every
 * one has, and `fail ...` for a stream that was refused or closed. Holds them open until killed or stdin closes.
 */
import { connect, type Socket } from "node:net";

const [url, countText, body, ...headerArgs] = process.argv.slice(2);
const target = new URL(url!);
const count = Number(countText);
const payload = Buffer.from(body ?? "{}");
const head =
  `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\ncontent-type: application/json\r\n` +
  `accept: text/event-stream\r\ncontent-length: ${payload.length}\r\n` +
  headerArgs.map((h) => h + "\r\n").join("") +
  "\r\n";
const request = Buffer.concat([Buffer.from(head), payload]);

let started = 0;
let failed = 0;
const sockets: Socket[] = [];
let reported = 0;

function report(): void {
  if (started !== reported) {
    reported = started;
    process.stdout.write(started === count ? `all ${started}\n` : `open ${started}\n`);
  }
}

function openOne(i: number): void {
  const socket = connect({ host: target.hostname, port: Number(target.port) });
  sockets.push(socket);
  let seen = "";
  let ok = false;
  socket.setNoDelay(true);
  socket.on("connect", () => socket.write(request));
  socket.on("data", (chunk: Buffer) => {
    if (ok) return; // the rest of the stream is read and dropped
    seen += chunk.toString("latin1");
    if (seen.length < 12) return;
    if (!seen.startsWith("HTTP/1.1 200")) {
      failed++;
      process.stdout.write(`fail ${i} ${seen.split("\r\n")[0]}\n`);
      socket.destroy();
      return;
    }
    if (seen.includes("response.created")) {
      ok = true;
      seen = "";
      started++;
    }
  });
  socket.on("error", (err) => {
    if (!ok) {
      failed++;
      process.stdout.write(`fail ${i} ${err.message}\n`);
    }
  });
  socket.on("close", () => {
    if (ok) {
      started--;
      process.stdout.write(`closed ${i}\n`);
    }
  });
}

// Open in small waves so the listen backlog is never the limit being measured.
let next = 0;
const wave = setInterval(() => {
  for (let k = 0; k < 50 && next < count; k++) openOne(next++);
  if (next >= count) clearInterval(wave);
}, 5);
setInterval(report, 100);

const shutdown = () => {
  for (const s of sockets) s.destroy();
  process.exit(failed > 0 ? 1 : 0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
process.stdin.on("end", shutdown);
process.stdin.resume();
