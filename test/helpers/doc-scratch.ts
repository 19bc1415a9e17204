/**
 * What the tests that follow a page as written share: the commands of its shell blocks, and a scratch
 * folder inside the repository (`.tmp/` is ignored by git) whose child processes are stopped, and which
 * is removed, after the file's tests.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');

/** The commands of a page's fenced sh/bash/shell blocks, continuation lines joined, comments dropped. */
export function shellCommands(page: string): string[] {
  const commands: string[] = [];
  let inBlock = false;
  let pending = '';
  for (const line of page.split('\n')) {
    if (/^```(sh|bash|shell)\s*$/.test(line)) inBlock = true;
    else if (line.startsWith('```')) inBlock = false;
    else if (inBlock) {
      const text = line.replace(/(^|\s)#(?![{\d]).*$/, '').trimEnd();
      if (text.endsWith('\\')) pending += `${text.slice(0, -1)} `;
      else if ((pending + text).trim() !== '') {
        commands.push((pending + text).trim());
        pending = '';
      }
    }
  }
  return commands;
}

/** A scratch folder `.tmp/<prefix>...`, and the list of child processes to stop, both cleaned up after the file's tests. */
export function scratchFolder(prefix: string): { readonly dir: string; readonly children: ChildProcess[] } {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.tmp', prefix));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, children };
}
