// How every date and time is shown in the browser, in the back office and the key portal alike: UTC, labelled, so
// an operator and a key holder in different zones read the same figures (and the same as the CLI and the logs).

/** "2026-11-27 04:19 UTC" from an ISO time; "—" for none; the text itself when it is no date. */
export function fmtDate(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}
