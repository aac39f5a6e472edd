/** `gantry releases ...` (issue 5). */
import { UsageError } from "./common";

export async function releasesCommand(_args: string[]): Promise<number> {
  throw new UsageError("gantry releases: not available yet");
}
