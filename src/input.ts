/** Reading what the user pointed a flag at: a file, stdin, or the flag's own text. */
import { UsageError } from './errors.js';
import { formatBytes, type IO, readStdin, stripBom } from './io.js';
import { type JsonObject, type JsonSource, parseJsonObject, quote } from './parse.js';

/** Large enough for any sensible properties object, small enough not to exhaust memory. */
export const MAX_INPUT_BYTES = 1024 * 1024;

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
  const { readFile, stat } = await import('node:fs/promises');
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw new UsageError(`${flag} @${path}: is a directory, not a file`);
    if (info.size > MAX_INPUT_BYTES) {
      throw new UsageError(`${flag} @${path}: file is larger than ${formatBytes(MAX_INPUT_BYTES)}`);
    }
    return stripBom(await readFile(path, 'utf8'));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code =
      typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : error instanceof Error
            ? error.message
            : String(error);
    throw new UsageError(`${flag} @${path}: cannot read the file (${reason})`);
  }
}
