/**
 * The text of a bulk input, decoded chunk by chunk in the encoding its byte-order mark names; a
 * spreadsheet workbook, UTF-16 without a BOM or a legacy code page is refused with what to do.
 */
import { TextDecoder } from 'node:util';
import { UsageError } from '../errors.js';
import { stripBom } from '../platform/io.js';

/**
 * Text, chunk by chunk, in the encoding the file's byte-order mark names: UTF-8 (with or without
 * its BOM), or UTF-16 LE or BE with one (Excel's "Unicode Text", LibreOffice's "Unicode"). Invalid
 * bytes stop the read: decoded as U+FFFD they would turn two different ids into one; the message
 * then says what the file looks like instead (UTF-16 without a BOM, a legacy 8-bit code page).
 */
export async function* decodeText(
  source: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let encoding = 'UTF-8';
  // The first bytes are held until there are enough to tell the encoding by.
  let head: Uint8Array | undefined;
  let first = true;
  const decode = function* (bytes: Uint8Array, stream: boolean): Generator<string> {
    if (decoder === undefined) {
      const start = startOf(bytes);
      encoding = start.encoding;
      decoder = new TextDecoder(start.label, { fatal: true, ignoreBOM: true });
      bytes = bytes.subarray(start.bomLength);
    }
    let text: string;
    try {
      text = decoder.decode(bytes, { stream });
    } catch {
      throw notText(encoding, bytes);
    }
    if (first && text.length > 0) {
      first = false;
      text = stripBom(text);
    }
    if (text.length > 0) yield text;
  };
  for await (const chunk of source) {
    if (typeof chunk === 'string') {
      let text = chunk;
      if (first && text.length > 0) {
        first = false;
        text = stripBom(text);
      }
      if (text.length > 0) yield text;
      continue;
    }
    if (decoder === undefined) {
      head = head === undefined ? chunk : Buffer.concat([head, chunk]);
      if (head.length < 4) continue;
      const bytes = head;
      head = undefined;
      yield* decode(bytes, true);
      continue;
    }
    yield* decode(chunk, true);
  }
  if (head !== undefined) yield* decode(head, true);
  if (decoder === undefined) return;
  let rest: string;
  try {
    rest = decoder.decode();
  } catch {
    throw new UsageError(`--from: the input ends inside a ${encoding} character`);
  }
  if (rest.length > 0) yield rest;
}

/** The encoding the first bytes name (a BOM), or UTF-8; UTF-16 without a BOM is refused. */
function startOf(bytes: Uint8Array): { label: string; encoding: string; bomLength: number } {
  const [b0, b1, b2, b3] = bytes;
  if (b0 === 0xff && b1 === 0xfe) return { label: 'utf-16le', encoding: 'UTF-16', bomLength: 2 };
  if (b0 === 0xfe && b1 === 0xff) return { label: 'utf-16be', encoding: 'UTF-16', bomLength: 2 };
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) {
    return { label: 'utf-8', encoding: 'UTF-8', bomLength: 3 };
  }
  // A workbook saved as is, or renamed to .csv: a ZIP (.xlsx, .ods) or an OLE file (.xls).
  const zip = b0 === 0x50 && b1 === 0x4b && b2 === 0x03 && b3 === 0x04;
  const ole = b0 === 0xd0 && b1 === 0xcf && b2 === 0x11 && b3 === 0xe0;
  if (zip || ole) {
    throw new UsageError(
      `--from: the input is a spreadsheet workbook (${zip ? '.xlsx or .ods' : '.xls'}), not text`,
      {
        hint: 'save the sheet as CSV first (Excel: "CSV UTF-8"; LibreOffice: "Text CSV"), then pass that file',
      },
    );
  }
  // "u\0s\0" or "\0u\0s": valid UTF-8 bytes, but a NUL is never in a CSV, JSON or NDJSON input;
  // read as UTF-8 it would give a header of "u\u0000s\u0000..." and nothing useful.
  if ((b1 === 0 && b3 === 0 && b0 !== 0) || (b0 === 0 && b2 === 0 && b1 !== 0)) {
    throw new UsageError('--from: the input looks like UTF-16 text without a byte-order mark', {
      hint: 'save it as UTF-8 (in Excel: "CSV UTF-8"; in LibreOffice: character set "Unicode (UTF-8)"), or as UTF-16 with a BOM',
    });
  }
  return { label: 'utf-8', encoding: 'UTF-8', bomLength: 0 };
}

/** The text is not valid in its encoding; for UTF-8, a guess at what it is instead. */
function notText(encoding: string, bytes: Uint8Array): UsageError {
  const saveAs =
    'save it as UTF-8 (in Excel: "CSV UTF-8"; in LibreOffice: character set "Unicode (UTF-8)")';
  if (encoding !== 'UTF-8') {
    return new UsageError(`--from: the input is not valid ${encoding} text`, { hint: saveAs });
  }
  // Bytes 0x80-0xFF that are not UTF-8 sequences: a one-byte code page (Excel's plain "CSV"
  // saves Windows-1252 in western locales), where "ü" is the single byte 0xFC.
  const legacy = bytes.some((byte) => byte >= 0x80);
  return new UsageError('--from: the input is not valid UTF-8 text', {
    hint: legacy
      ? `it looks like a one-byte encoding such as Windows-1252 or Latin-1 (Excel's plain "CSV"): ${saveAs}`
      : saveAs,
  });
}
