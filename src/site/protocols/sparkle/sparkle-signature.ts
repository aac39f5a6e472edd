/**
 * The `sparkle:edSignature` of an archive: Sparkle checks an Ed25519 signature of the file itself. A minisign
 * signature of the legacy kind (`Ed`) is exactly that (its 64 signature bytes); a prehashed one (`ED`, minisign's
 * default) signs a BLAKE2b hash of the file instead, which Sparkle cannot check, so it gives none.
 */
import { MinisignError } from "../../../minisign-key";
import { parseSignature } from "../../releases/minisign";

export function edSignatureOf(signature: string | null | undefined): string | null {
  if (!signature) return null;
  try {
    const s = parseSignature(signature);
    return s.prehashed ? null : Buffer.from(s.signature).toString("base64");
  } catch (err) {
    if (err instanceof MinisignError) return null;
    throw err;
  }
}
