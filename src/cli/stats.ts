/** `gantry stats clients` (issue 6). */
import { UsageError } from "./common";

export async function statsCommand(_args: string[]): Promise<number> {
  throw new UsageError("gantry stats: not available yet");
}
