/**
 * The static baseline of the site documents: Bun.serve static routes returning fixed bytes (what Bun can do
 * with no JavaScript per request). `bun bench/static-server.ts PORT ROUTES_JSON` where ROUTES_JSON maps a path
 * to { file, headers } — the bytes and headers captured from Gantry's own answer.
 */
export {};

const port = Number(process.argv[2] ?? 0);
const spec = (await Bun.file(process.argv[3]!).json()) as Record<string, { file: string; headers: Record<string, string> }>;

const routes: Record<string, Response> = {};
for (const [path, { file, headers }] of Object.entries(spec)) {
  routes[path] = new Response(await Bun.file(file).bytes(), { headers });
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  routes,
  fetch: () => new Response("not found", { status: 404 }),
});

process.stdout.write(`listening ${server.port}\n`);
