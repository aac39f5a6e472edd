/**
 * Token log-probabilities between the two APIs (pure). Chat asks with `logprobs: true` and `top_logprobs: N`; the
 * Responses API with `top_logprobs: N` and `include: ["message.output_text.logprobs"]`, and answers with a
 * `logprobs` list on each `output_text` part and on each `output_text.delta` event. Chat's `choices[].logprobs` is
 * `{content: [...], refusal: null}` with the same entries.
 */
export const LOGPROBS_INCLUDE = "message.output_text.logprobs";

export interface ChatLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] | null }>;
}

function entry(v: any): { token: string; logprob: number; bytes: number[] | null } | null {
  if (v === null || typeof v !== "object" || typeof v.token !== "string" || typeof v.logprob !== "number") return null;
  const bytes = Array.isArray(v.bytes) && v.bytes.every((b: unknown) => Number.isInteger(b)) ? (v.bytes as number[]) : null;
  return { token: v.token, logprob: v.logprob, bytes };
}

/** A Responses `logprobs` list in chat's form; entries that are not well-formed are left out. */
export function chatLogprobs(list: unknown): ChatLogprob[] {
  if (!Array.isArray(list)) return [];
  const out: ChatLogprob[] = [];
  for (const v of list) {
    const e = entry(v);
    if (!e) continue;
    const top = Array.isArray(v.top_logprobs) ? v.top_logprobs.map(entry).filter((x: unknown): x is NonNullable<ReturnType<typeof entry>> => x !== null) : [];
    out.push({ ...e, top_logprobs: top });
  }
  return out;
}
