/**
 * An upstream in its own process that streams one Responses text reply without end, each chunk written only when
 * the previous one was taken: how much Gantry read from it is what it generated, and none of its memory counts in
 * the test process's heap. Run as a script, it serves and prints its port; `startEndlessUpstream` does that and asks
 * it for its counters over HTTP (`GET /stats`).
 */
import { BUN } from "../reliability/serve-process";

export interface EndlessUpstream {
  url: string;
  /** Bytes generated so far, and the replies still open (a reply whose reader went away is cancelled). */
  stats(): Promise<{ generated: number; open: number }>;
  close(): Promise<void>;
}

const HEAD = [
  { type: "response.created", sequence_number: 0, response: { id: "resp_endless", object: "response", created_at: 1, status: "in_progress", model: "m", output: [] } },
  { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { id: "msg_endless", type: "message", role: "assistant", status: "in_progress", content: [] } },
  { type: "response.content_part.added", sequence_number: 2, item_id: "msg_endless", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } },
];

function serve(): void {
  let generated = 0;
  let open = 0;
  const enc = new TextEncoder();
  const frame = (ev: { type: string }) => `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      if (new URL(req.url).pathname === "/stats") return Response.json({ generated, open });
      await req.arrayBuffer();
      open++;
      let seq = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            let text = "";
            if (seq === 0) {
              text = HEAD.map(frame).join("");
              seq = HEAD.length;
            } else {
              for (let i = 0; i < 50; i++, seq++) text += frame({ type: "response.output_text.delta", sequence_number: seq, item_id: "msg_endless", output_index: 0, content_index: 0, delta: "word " } as { type: string });
            }
            generated += text.length;
            controller.enqueue(enc.encode(text));
          },
          cancel() {
            open--;
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  });
  console.log(server.port);
}

if (import.meta.main) serve();

export async function startEndlessUpstream(): Promise<EndlessUpstream> {
  const proc = Bun.spawn([BUN, import.meta.path], { stdout: "pipe", stderr: "inherit", stdin: "ignore" });
  const reader = proc.stdout.getReader();
  let printed = "";
  while (!printed.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error("the endless upstream exited before printing its port");
    printed += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const base = `http://127.0.0.1:${Number(printed.trim())}`;
  return {
    url: `${base}/v1`,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { generated: number; open: number },
    async close() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
