/**
 * The `signature` of a thinking block Gantry hands out (and the `data` of a redacted one). Anthropic's clients send
 * thinking blocks back on the next turn with their signature untouched; the upstream can only continue its reasoning
 * from its own `encrypted_content`. So the signature carries it: `gantry1.` followed by the encrypted content as the
 * upstream sent it (already an opaque base64 text). A signature without that prefix was not issued by Gantry (another
 * provider's, or none), and its block is dropped rather than passed to an upstream that cannot read it. Nothing is
 * added to protect it: the upstream checks its own encrypted content and refuses one it did not make.
 */

const PREFIX = "gantry1.";

/** The signature that carries an upstream's encrypted reasoning. */
export function signatureOf(encryptedContent: string): string {
  return PREFIX + encryptedContent;
}

/** The encrypted reasoning a signature carries, or null when Gantry did not issue it. */
export function encryptedContentOf(signature: unknown): string | null {
  if (typeof signature !== "string" || !signature.startsWith(PREFIX) || signature.length === PREFIX.length) return null;
  return signature.slice(PREFIX.length);
}
