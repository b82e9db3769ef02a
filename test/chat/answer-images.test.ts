/**
 * Which pictures an answer embeds from the workspace: Markdown image syntax
 * with a relative path, in order, once each, at most four; web and data
 * addresses are not the workspace's.
 */
import { describe, expect, it } from 'vitest';
import { embeddedImages, MAX_ANSWER_IMAGES } from '../../src/chat/attachments/answer-images.js';

describe('embeddedImages', () => {
  it('finds relative paths, with a title or in angle brackets, once each and in order', () => {
    const text = 'A ![one](charts/a.png) and ![two](<my charts/b.jpg> "Title") then ![a again](./charts/a.png).';
    expect(embeddedImages(text)).toEqual(['charts/a.png', 'my charts/b.jpg']);
  });

  it('leaves out web, data and protocol-relative addresses, and plain links', () => {
    const text = '![w](https://example.com/a.png) ![d](data:image/png;base64,AAAA) ![p](//cdn.example/a.png) [link](notes.png) ![f](file:///etc/passwd)';
    expect(embeddedImages(text)).toEqual([]);
  });

  it(`sends at most ${MAX_ANSWER_IMAGES}`, () => {
    const text = Array.from({ length: 6 }, (_, i) => `![i](p${i}.png)`).join(' ');
    expect(embeddedImages(text)).toEqual(['p0.png', 'p1.png', 'p2.png', 'p3.png']);
  });
});
