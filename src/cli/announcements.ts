/** `gantry announcements ...` (issue 6). */
import { UsageError } from "./common";

export async function announcementsCommand(_args: string[]): Promise<number> {
  throw new UsageError("gantry announcements: not available yet");
}
