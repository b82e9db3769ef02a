import { describe, expect, it } from 'vitest';
import { pdfText } from '../../../src/engine/attachments/pdf-text.js';
import { minimalPdf } from '../../support/pdf.js';

describe('pdfText', () => {
  it('reads the text of each page, marked by page', async () => {
    expect(await pdfText(minimalPdf(['The word is pelican.', 'Second page here.']))).toBe('--- page 1 ---\nThe word is pelican.\n\n--- page 2 ---\nSecond page here.');
  });

  it('stops at the page limit and says so', async () => {
    const text = await pdfText(minimalPdf(['one', 'two', 'three']), { maxPages: 2, maxChars: 10_000, timeoutMs: 5_000 });
    expect(text).toBe('--- page 1 ---\none\n\n--- page 2 ---\ntwo\n[only the first 2 of 3 pages]');
  });

  it('has nothing for a PDF without text, or bytes that are no PDF', async () => {
    expect(await pdfText(minimalPdf(['']))).toBeUndefined();
    expect(await pdfText(Buffer.from('%PDF-1.4 garbage'))).toBeUndefined();
  });
});
