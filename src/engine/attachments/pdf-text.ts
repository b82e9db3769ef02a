/**
 * The text of a PDF, so that the model can read a received PDF with
 * `files_read`: extracted with unpdf (pdf.js built for servers), page by
 * page, up to a number of pages and characters and within a time limit. A
 * PDF without a text layer (a scan) has none.
 */
import { getDocumentProxy } from 'unpdf';

/** A run of text on a page, as pdf.js gives it. */
interface TextItem {
  str: string;
  hasEOL: boolean;
}

/** Bounds on what is extracted. */
export const PDF_TEXT_LIMITS = { maxPages: 300, maxChars: 2_000_000, timeoutMs: 30_000 } as const;

/** The text of the PDF in `bytes`; undefined when it has none, cannot be read, or takes too long. */
export async function pdfText(bytes: Uint8Array, limits: { maxPages: number; maxChars: number; timeoutMs: number } = PDF_TEXT_LIMITS): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), limits.timeoutMs)));
  try {
    return await Promise.race([extract(bytes, limits), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

async function extract(bytes: Uint8Array, limits: { maxPages: number; maxChars: number }): Promise<string | undefined> {
  // pdf.js takes ownership of the buffer it is given: a copy keeps the caller's intact.
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const pages = Math.min(pdf.numPages, limits.maxPages);
    const parts: string[] = [];
    let length = 0;
    let found = false;
    for (let number = 1; number <= pages && length < limits.maxChars; number += 1) {
      const content = await (await pdf.getPage(number)).getTextContent();
      const text = content.items.map((item: TextItem | object) => ('str' in item ? `${item.str}${item.hasEOL ? '\n' : ''}` : '')).join('').trim();
      found ||= text.length > 0;
      const part = `--- page ${number} ---\n${text}`;
      parts.push(part);
      length += part.length + 2;
    }
    if (!found) return undefined;
    const joined = parts.join('\n\n');
    const cut = joined.length > limits.maxChars ? `${joined.slice(0, limits.maxChars)}\n[cut: the text goes on]` : joined;
    return pdf.numPages > parts.length ? `${cut}\n[only the first ${parts.length} of ${pdf.numPages} pages]` : cut;
  } finally {
    await pdf.destroy();
  }
}
