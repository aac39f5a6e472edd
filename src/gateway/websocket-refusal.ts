/**
 * The Codex CLI and SDK, given a base URL, first try the Responses API over a WebSocket (a GET on /v1/responses with
 * `Upgrade: websocket`). Gantry serves it over HTTP only. A 405 makes Codex try again five times (about 6 s a turn)
 * before it falls back; a 426 Upgrade Required makes it fall back to HTTP at once. Consulted only where a request
 * already found no route (the error path), so no served request pays for it.
 */
import { AppError } from "../errors";

const RESPONSES_PATHS = new Set(["/v1/responses", "/responses"]);

/** Whether the request asks to switch to WebSocket (`Upgrade` may list several protocols). */
export function asksForWebSocket(headers: Headers): boolean {
  const upgrade = headers.get("upgrade");
  return upgrade !== null && upgrade.split(",").some((p) => p.trim().toLowerCase().startsWith("websocket"));
}

/** The 426 for a WebSocket attempt on the responses endpoint, or null for any other request. */
export function webSocketRefusal(method: string, path: string, headers: Headers): AppError | null {
  if (method !== "GET" || !RESPONSES_PATHS.has(path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path)) return null;
  if (!asksForWebSocket(headers)) return null;
  return new AppError("upgrade_required", "The Responses API is served over HTTP here, not WebSocket: POST the request to this path.");
}
