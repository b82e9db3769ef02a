/**
 * Small audio files whose bytes are what they claim, for tests of voice and
 * audio: an Ogg/Opus voice note (as Telegram and Discord send) and a WAV
 * file. They hold no real sound: the fake transcription endpoint does not
 * listen, it answers what the test set.
 */

/** An Ogg page holding an OpusHead packet, then `padding` bytes of another page's worth. */
export function oggOpus(padding = 512): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'ascii');
  head.writeUInt8(1, 8); // version
  head.writeUInt8(1, 9); // channels
  head.writeUInt16LE(312, 10); // pre-skip
  head.writeUInt32LE(48_000, 12); // input sample rate
  const page = Buffer.alloc(27 + 1);
  page.write('OggS', 0, 'ascii');
  page.writeUInt8(0, 4); // version
  page.writeUInt8(0x02, 5); // beginning of stream
  page.writeUInt32LE(0x1234, 14); // serial number
  page.writeUInt8(1, 26); // one segment
  page.writeUInt8(head.length, 27);
  return Buffer.concat([page, head, Buffer.alloc(padding, 1)]);
}

/** A WAV file of `samples` silent 16-bit mono samples at 16 kHz. */
export function wav(samples = 1600): Buffer {
  const data = samples * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

/** The start of a WebM file (an EBML header whose DocType is `webm`), as a browser records voice. */
export function webm(padding = 256): Buffer {
  const docType = Buffer.concat([Buffer.from([0x42, 0x82, 0x84]), Buffer.from('webm', 'ascii')]);
  return Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x80 | docType.length]), docType, Buffer.alloc(padding)]);
}
