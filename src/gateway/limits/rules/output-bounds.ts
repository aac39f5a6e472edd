/** The key's max-tokens bound applied to what goes upstream (admission refused larger explicit values already). */

/** What the bound reads of an admission's lease (declared here, so these rules import nothing of admission.ts). */
export interface BoundedLease {
  key: { key: { maxTokens: number | null } };
}

/**
 * Sent upstream as `max_output_tokens` when the request set none (or null): a bound that only refused larger
 * explicit values would let every request that omits the field run unbounded.
 */
export function boundOutput<T extends { max_output_tokens?: unknown }>(lease: BoundedLease | null, request: T): T {
  const bound = lease?.key.key.maxTokens ?? null;
  if (bound === null || typeof request.max_output_tokens === "number") return request;
  return { ...request, max_output_tokens: bound };
}

/**
 * The same bound for a raw passthrough body, which goes upstream as the caller's text: the field is added to that
 * text (after its last member, the rest byte for byte) when the request set none; a caller's `null` is replaced,
 * which takes serialising the body again.
 */
export function boundRawText(lease: BoundedLease | null, body: Record<string, unknown>, text: string): string {
  const bound = lease?.key.key.maxTokens ?? null;
  if (bound === null || typeof body.max_output_tokens === "number") return text;
  if (Object.hasOwn(body, "max_output_tokens")) return JSON.stringify({ ...body, max_output_tokens: bound });
  // The text is one JSON object with at least `model` in it: its last `}` closes it, after a member.
  const end = text.lastIndexOf("}");
  return `${text.slice(0, end)},"max_output_tokens":${bound}${text.slice(end)}`;
}
