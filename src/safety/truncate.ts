/**
 * Bounding very long text before anything else reads it. Truncation happens
 * first so that later scans (redaction, injection markers) only ever see a
 * bounded amount of text, whatever a tool returned.
 */

/** How long text is cut. */
export interface TruncateOptions {
  /** Characters kept in total (head + tail). */
  maxChars: number;
  /** Share of `maxChars` kept from the start; the rest comes from the end. Default 0.75. */
  headShare?: number;
  /**
   * Applied to each kept window (a little wider than kept, so a secret that
   * straddles a cut is still seen whole) before it is cut to size.
   */
  transform?: (window: string) => string;
}

/** Extra characters scanned past each cut so a secret straddling it is still recognised. */
const WINDOW_MARGIN = 512;

/** True when {@link truncateText} would cut `text`. */
export function needsTruncation(text: string, maxChars: number): boolean {
  return text.length > maxChars;
}

/**
 * The text cut to `maxChars` characters, keeping the start and the end (where
 * errors usually are), with a note saying how much was left out.
 */
export function truncateText(text: string, options: TruncateOptions): string {
  const transform = options.transform ?? ((window: string) => window);
  if (!needsTruncation(text, options.maxChars)) return transform(text);
  const headChars = Math.floor(options.maxChars * (options.headShare ?? 0.75));
  const tailChars = options.maxChars - headChars;
  const head = transform(text.slice(0, headChars + WINDOW_MARGIN)).slice(0, headChars);
  const tail = tailChars > 0 ? transform(text.slice(-(tailChars + WINDOW_MARGIN))).slice(-tailChars) : '';
  const omitted = text.length - headChars - tailChars;
  return `${head}\n[... output truncated: ${omitted} of ${text.length} characters omitted ...]\n${tail}`;
}
