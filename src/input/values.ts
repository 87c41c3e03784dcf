/** Reading what the user pointed a flag at: a file, stdin, or the flag's own text. */
import { UsageError } from '../errors.js';
import {
  escapeControls,
  FileTooLargeError,
  formatBytes,
  type IO,
  readFileCapped,
  readStdin,
  stripBom,
} from '../platform/io.js';
import { type JsonObject, type JsonSource, parseJsonObject, quote } from './parse.js';

/** Large enough for any sensible properties object, small enough not to exhaust memory. */
const MAX_INPUT_BYTES = 1024 * 1024;

export async function readJsonSource(
  source: JsonSource,
  flag: string,
  io: IO,
): Promise<JsonObject> {
  switch (source.kind) {
    case 'inline':
      return parseJsonObject(source.text, flag, 'the value');
    case 'stdin': {
      const text = await readStdin(io, `${flag} -`, MAX_INPUT_BYTES);
      if (text.trim() === '') throw new UsageError(`${flag} -: stdin was empty`);
      return parseJsonObject(text, flag, 'stdin');
    }
    case 'file':
      return parseJsonObject(
        await readTextFile(source.path, flag),
        flag,
        `file ${quote(source.path)}`,
      );
  }
}

async function readTextFile(path: string, flag: string): Promise<string> {
  const shown = escapeControls(path);
  try {
    return stripBom((await readFileCapped(path, MAX_INPUT_BYTES)).toString('utf8'));
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      throw new UsageError(
        `${flag} @${shown}: file is larger than ${formatBytes(MAX_INPUT_BYTES)}`,
      );
    }
    const code =
      typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code === 'EISDIR') throw new UsageError(`${flag} @${shown}: is a directory, not a file`);
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : error instanceof Error
            ? escapeControls(error.message)
            : escapeControls(String(error));
    throw new UsageError(`${flag} @${shown}: cannot read the file (${reason})`);
  }
}
