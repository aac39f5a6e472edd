/**
 * Arguments of the demo model's tool calls: values that follow the tool's JSON schema the way a model's would, taken
 * from the user's words where they fit (the named place for `city`/`location`, the first number within the bounds),
 * fixed samples for formats. Pure: the same schema and text give the same arguments.
 */

const STOPWORDS = new Set(
  "a an the is are was were be to of in on at for by with and or please can could would you me my i what whats what's how tell show find get give about is it this that do does".split(
    " ",
  ),
);

/** A plausible value for a string argument: the user's content words, e.g. "weather in Paris?" -> "weather Paris". */
function keywords(text: string): string {
  const words = text.split(/[^\p{L}\p{N}'-]+/u).filter((w) => w && !STOPWORDS.has(w.toLowerCase()));
  return words.slice(0, 6).join(" ") || "demo";
}

const PLACE_PREPOSITIONS = new Set(["in", "at", "for", "to", "near", "from", "of"]);
const isCapitalised = (word: string) => /^\p{Lu}/u.test(word);

/**
 * The place a request names: the capitalised words after a preposition ("weather in New York" -> "New York"),
 * else after one in lower case ("weather in paris" -> "paris"), else any capitalised word but the first.
 */
export function placeIn(text: string): string | null {
  const words = text.split(/[^\p{L}\p{N}'-]+/u).filter(Boolean);
  const content = (w: string | undefined) => w !== undefined && !STOPWORDS.has(w.toLowerCase());
  const isPreposition = (w: string) => PLACE_PREPOSITIONS.has(w.toLowerCase());
  /** The capitalised content words starting at i ("New York"), or null. */
  const nameAt = (i: number) => {
    const run: string[] = [];
    for (let j = i; j < words.length && isCapitalised(words[j]) && content(words[j]); j++) run.push(words[j]);
    return run.length ? run.join(" ") : null;
  };
  for (let i = 0; i < words.length; i++) {
    const name = isPreposition(words[i]) ? nameAt(i + 1) : null;
    if (name) return name;
  }
  for (let i = 0; i + 1 < words.length; i++) if (isPreposition(words[i]) && content(words[i + 1])) return words[i + 1];
  for (let i = 1; i < words.length; i++) {
    const name = nameAt(i);
    if (name) return name;
  }
  return null;
}

/**
 * A string for the property `name`, chosen the way a model would: a place for place-like names ("city",
 * "location"), the request's content words for query-like ones, values of the declared format, and the content
 * words otherwise.
 */
function sampleString(schema: any, name: string, userText: string): string {
  switch (schema?.format) {
    case "date":
      return "2026-01-01";
    case "date-time":
      return "2026-01-01T09:00:00Z";
    case "email":
      return "user@example.com";
    case "uri":
    case "url":
      return "https://example.com/";
  }
  const n = name.toLowerCase();
  if (/city|location|place|town|destination|region|country|address/.test(n)) return placeIn(userText) ?? keywords(userText);
  if (/^units?$/.test(n)) return "metric";
  if (/^(lang|language|locale)$/.test(n)) return "en";
  return keywords(userText);
}

/** The user's first number, kept within the schema's bounds (1 when the text has none). */
function sampleNumber(schema: any, userText: string, integer: boolean): number {
  let value = Number(userText.match(/-?\d+(\.\d+)?/)?.[0] ?? 1);
  if (integer) value = Math.round(value);
  if (typeof schema?.minimum === "number" && value < schema.minimum) value = schema.minimum;
  if (typeof schema?.maximum === "number" && value > schema.maximum) value = schema.maximum;
  return value;
}

/**
 * Fills a JSON Schema with deterministic values that fit it: strings from the user's words by what the property
 * is called (see sampleString), numbers from the user's digits, enums and defaults as declared. `name` is the
 * property being filled ("" at the top).
 */
export function sampleFromSchema(schema: any, userText: string, depth = 0, name = ""): unknown {
  if (!schema || typeof schema !== "object" || depth > 6) return sampleString(null, name, userText);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length) {
    return sampleFromSchema(variants.find((v: any) => v?.type !== "null") ?? variants[0], userText, depth + 1, name);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type ?? (schema.properties ? "object" : "string")) {
    case "integer":
      return sampleNumber(schema, userText, true);
    case "number":
      return sampleNumber(schema, userText, false);
    case "boolean":
      return true;
    case "null":
      return null;
    case "array":
      return [sampleFromSchema(schema.items, userText, depth + 1, name)];
    case "object": {
      const props: Record<string, any> = schema.properties ?? {};
      const keys: string[] = Array.isArray(schema.required) ? schema.required : Object.keys(props);
      return Object.fromEntries(keys.map((k) => [k, sampleFromSchema(props[k], userText, depth + 1, k)]));
    }
    default:
      return sampleString(schema, name, userText);
  }
}
