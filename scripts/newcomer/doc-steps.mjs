/**
 * The steps a page of the docs asks a reader to follow, read from its `newcomer:` markers: an HTML
 * comment on the line before a fenced block says what the block is.
 *
 *   <!-- newcomer: file=app.ts -->        the block is the file app.ts (.ts/.json: TypeScript project,
 *                                         .js: CommonJS project)
 *   <!-- newcomer: run=ts,js -->          the block is shell commands, run in those projects
 *   <!-- newcomer: run=js background -->  ... left running (a server) while the next steps run
 *   <!-- newcomer: output -->             the block is what the run block before it prints, in each
 *                                         project; `...` stands for any text on its line
 */
import { readFileSync } from 'node:fs';

export const FLAVOURS = ['ts', 'js'];

/** @typedef {{ kind: 'file', name: string, flavour: string, content: string, line: number }} FileStep */
/** @typedef {{ kind: 'run', flavours: string[], background: boolean, script: string, line: number, output?: string }} RunStep */

function flavourOfFile(name) {
  if (/\.(ts|mts|json)$/.test(name)) return 'ts';
  if (/\.(js|cjs)$/.test(name)) return 'js';
  throw new Error(`no project for the file ${name}: name it .ts, .json or .js`);
}

/** The marked blocks of `file`, in order; every marker must precede a fenced block. */
export function docSteps(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  /** @type {(FileStep | RunStep)[]} */
  const steps = [];
  let marker;
  for (let i = 0; i < lines.length; i++) {
    const found = /^<!-- newcomer: (.+?) -->$/.exec(lines[i]);
    if (found) {
      marker = { text: found[1], line: i + 1 };
      continue;
    }
    if (marker === undefined || lines[i].trim() === '') continue;
    if (!lines[i].startsWith('```')) throw new Error(`${file}:${marker.line}: the marker is not followed by a fenced block`);
    const body = [];
    const start = i + 2;
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    const content = `${body.join('\n')}\n`;
    steps.push(toStep(marker, content, start, steps, file));
    marker = undefined;
  }
  return steps;
}

function toStep(marker, content, line, previous, file) {
  const where = `${file}:${marker.line}`;
  const [kind, ...words] = marker.text.split(/\s+/);
  if (kind.startsWith('file=')) {
    const name = kind.slice('file='.length);
    return { kind: 'file', name, flavour: flavourOfFile(name), content, line };
  }
  if (kind.startsWith('run=')) {
    const flavours = kind.slice('run='.length).split(',');
    if (flavours.some((f) => !FLAVOURS.includes(f))) throw new Error(`${where}: unknown project in ${kind}`);
    return { kind: 'run', flavours, background: words.includes('background'), script: content, line };
  }
  if (kind === 'output') {
    // The output of the last run block of each project since the previous output block.
    const owners = [];
    for (const flavour of FLAVOURS) {
      for (let j = previous.length - 1; j >= 0 && previous[j].kind !== 'output'; j--) {
        if (previous[j].kind === 'run' && previous[j].flavours.includes(flavour)) {
          owners.push(previous[j]);
          break;
        }
      }
    }
    if (owners.length === 0) throw new Error(`${where}: an output block with no run block before it`);
    for (const owner of owners) owner.output = content;
    return { kind: 'output', line };
  }
  throw new Error(`${where}: unknown marker "${marker.text}"`);
}

/**
 * A matcher for a documented output: the text as written, where `...` matches any text on its line.
 * Returns whether `actual` (its trailing newlines aside) is exactly that.
 */
export function matchesOutput(expected, actual) {
  const pattern = expected
    .trimEnd()
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^\\n]*?');
  return new RegExp(`^${pattern}$`).test(actual.trimEnd());
}
