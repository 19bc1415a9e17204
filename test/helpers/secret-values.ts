/**
 * Secret values of the generated format (docs/security.md, "The secret format"), made for a given
 * secret ID: a wrong value that names a real secret, as a guess at it would.
 */
import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) {
    crc ^= text.charCodeAt(i);
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A random value of the generated format, with a valid checksum, naming secret `secretId`. */
export function secretWithId(secretId: string): string {
  const random = [...randomBytes(44)].map((byte) => BASE62[byte % 62]).join('');
  const body = `esas_${secretId}_${random}`;
  let value = crc32(body);
  let checksum = '';
  for (let i = 0; i < 6; i++) {
    checksum = BASE62[value % 62] + checksum;
    value = Math.floor(value / 62);
  }
  return body + checksum;
}
