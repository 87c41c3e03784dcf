/** Reading what the user pointed a flag at: a file, stdin, or the flag's own text. */
import { UsageError } from '../errors.js';
import {
  FileTooLargeError,
  formatBytes,
  type IO,
  readFileCapped,
  readStdin,
  stripBom,
} from '../platform/io.js';
import { message } from '../text/message.js';
import { type JsonObject, type JsonSource, parseJsonObject } from './parse.js';

/** Large enough for any sensible properties object, small enough not to exhaust memory. */
const MAX_INPUT_BYTES = 1024 * 1024;

export async function readJsonSource(
  source: JsonSource,
  flag: string,
  io: IO,
): Promise<JsonObject> {
  switch (source.kind) {
    case 'inline':
      return parseJsonObject(source.text, flag, 'the value', true);
    case 'stdin': {
      const text = await readStdin(io, `${flag} -`, MAX_INPUT_BYTES);
      if (text.trim() === '') throw new UsageError(`${flag} -: stdin was empty`);
      return parseJsonObject(text, flag, 'stdin');
    }
    case 'file':
      return parseJsonObject(
        await readTextFile(source.path, flag),
        flag,
        message`file "${source.path}"`,
      );
  }
}

async function readTextFile(path: string, flag: string): Promise<string> {
  try {
    return stripBom((await readFileCapped(path, MAX_INPUT_BYTES)).toString('utf8'));
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      throw new UsageError(
        message`${flag} @${path}: file is larger than ${formatBytes(MAX_INPUT_BYTES)}`,
      );
    }
    const code =
      typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code === 'EISDIR')
      throw new UsageError(message`${flag} @${path}: is a directory, not a file`);
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : error instanceof Error
            ? error.message
            : String(error);
    throw new UsageError(message`${flag} @${path}: cannot read the file (${reason})`);
  }
}
