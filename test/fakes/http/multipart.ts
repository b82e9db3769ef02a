/**
 * A multipart/form-data parser for the fakes: the platforms' clients upload
 * files this way (grammY's InputFile, discord.js's `files[n]` with
 * `payload_json`). Written out here rather than through `Request.formData()`,
 * which refuses grammY's bodies (no CRLF after the closing boundary).
 */

/** One part of a form: a field, or a file when it has a file name. */
export interface FormPart {
  name: string;
  /** Present for a file part. */
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The parts of `body`, sent with `contentType` (which names the boundary); throws on a body that is not multipart. */
export function parseMultipart(body: Buffer, contentType: string): FormPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) throw new Error('multipart body without a boundary');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]!.trim()}`);
  const parts: FormPart[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    let from = start + delimiter.length;
    if (body.subarray(from, from + 2).toString() === '--') break;
    if (body.subarray(from, from + 2).toString() === '\r\n') from += 2;
    const next = body.indexOf(delimiter, from);
    if (next === -1) break;
    // The part ends with the CRLF before the next delimiter.
    const end = body.subarray(next - 2, next).toString() === '\r\n' ? next - 2 : next;
    parts.push(partOf(body.subarray(from, end)));
    start = next;
  }
  return parts;
}

function partOf(raw: Buffer): FormPart {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw.toString('utf8') : raw.subarray(0, split).toString('utf8');
  const data = split === -1 ? Buffer.alloc(0) : Buffer.from(raw.subarray(split + 4));
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const disposition = headers.get('content-disposition') ?? '';
  // grammY writes `filename=chart.png` without quotes; browsers and undici quote it.
  const name = paramOf(disposition, 'name') ?? '';
  const filename = paramOf(disposition, 'filename');
  const contentType = headers.get('content-type');
  return { name, data, ...(filename !== undefined ? { filename } : {}), ...(contentType ? { contentType } : {}) };
}

/** A parameter of a header value, quoted or not: `name="x"`, `filename=x.png`. */
function paramOf(value: string, param: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${param}=(?:"([^"]*)"|([^;]*))`, 'i').exec(value);
  return match ? (match[1] ?? match[2]!.trim()) : undefined;
}
