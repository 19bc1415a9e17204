/**
 * @module read-public-key
 * Reads the `--public-key` argument of `key add`: a file, or standard input for `-`. Only a bounded
 * prefix is read (more than any public key), so a wrong path such as a device or a huge file cannot
 * hang or exhaust the command; the admin API refuses what is too long.
 */
import { open } from 'node:fs/promises';
import { UsageError } from './usage-error.js';

/** A public key is a few KiB at most; reading one byte past the admin API's limit lets it say "too large". */
const READ_LIMIT = 64 * 1024 + 1;

/**
 * The text of the public key file at `path`, or of standard input when `path` is `-`.
 *
 * @throws UsageError when the file cannot be read (the message names the path and the reason).
 * @example
 * ```ts
 * const pem = await readPublicKeyArgument('public.pem') // '-----BEGIN PUBLIC KEY-----...'
 * const piped = await readPublicKeyArgument('-') // `--public-key -`: standard input
 * ```
 */
export async function readPublicKeyArgument(path: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if (path === '-') return readStream(stdin);
  let file;
  try {
    file = await open(path, 'r');
  } catch (error) {
    throw new UsageError(`--public-key: cannot read ${path}: ${describeFsError(error)}`);
  }
  try {
    const buffer = Buffer.alloc(READ_LIMIT);
    let length = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, length, READ_LIMIT - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === READ_LIMIT) break;
    }
    return buffer.subarray(0, length).toString('utf8');
  } catch (error) {
    throw new UsageError(`--public-key: cannot read ${path}: ${describeFsError(error)}`);
  } finally {
    await file.close();
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(buffer);
    length += buffer.length;
    if (length >= READ_LIMIT) break;
  }
  return Buffer.concat(chunks).subarray(0, READ_LIMIT).toString('utf8');
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  return typeof code === 'string' ? code : 'unreadable';
}
