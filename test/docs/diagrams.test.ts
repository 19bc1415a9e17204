/**
 * The sequence diagrams of README.md and docs/*.md (```mermaid blocks, which the code host draws) are
 * valid. No Mermaid parser is a dependency of this repository, so a strict checker of the subset the
 * pages use stands in for one: `sequenceDiagram` first; `autonumber`; `participant ID` or `participant
 * ID as Label`, each declared once, before any use; messages `A->>B: text` and `A-->>B: text` between
 * declared participants; `Note over|left of|right of A[,B]: text`; `alt`/`else`/`end`, `loop`/`end`
 * and `opt`/`end`, balanced, `else` only inside `alt`. Anything else is refused, and so are the
 * characters Mermaid reads as statement separators or entity codes (`;`, `#`) in any text. A real
 * parser (mermaid's `mermaid.parse()`) would be stricter still.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

interface Diagram {
  readonly where: string;
  readonly lines: string[];
}

function diagrams(page: string): Diagram[] {
  return [...readFileSync(join(ROOT, page), 'utf8').matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((m) => {
    const line = readFileSync(join(ROOT, page), 'utf8').slice(0, m.index).split('\n').length + 1;
    return { where: `${page}:${line}`, lines: m[1]!.split('\n') };
  });
}

/** Words Mermaid's sequence grammar reserves: not usable as participant IDs. */
const KEYWORDS = new Set(['end', 'alt', 'else', 'opt', 'loop', 'par', 'and', 'rect', 'critical', 'break', 'option', 'note', 'participant', 'actor', 'box', 'autonumber', 'activate', 'deactivate', 'over', 'as', 'left', 'right', 'of', 'create', 'destroy', 'links', 'link', 'properties', 'details', 'title']);
const ID = '[A-Za-z][A-Za-z0-9_]*';
/** Text Mermaid keeps as written: no statement separator, no entity code. */
const TEXT = '[^;#]+';

/** The problems of one diagram, empty when it is valid for the subset. */
function checkSequenceDiagram(lines: readonly string[]): string[] {
  const problems: string[] = [];
  const body = lines.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('%%'));
  if (body[0] !== 'sequenceDiagram') return ['the first line is not `sequenceDiagram`'];
  const declared = new Set<string>();
  const blocks: string[] = [];
  let messages = 0;
  const known = (name: string, line: string): void => {
    if (!declared.has(name)) problems.push(`\`${line}\`: ${name} is not a declared participant`);
  };
  for (const line of body.slice(1)) {
    let m: RegExpExecArray | null;
    if (line === 'autonumber') continue;
    if ((m = new RegExp(`^participant (${ID})(?: as (${TEXT}))?$`).exec(line))) {
      const [, id, label] = m;
      if (KEYWORDS.has(id!.toLowerCase())) problems.push(`\`${line}\`: ${id} is a Mermaid keyword`);
      if (declared.has(id!)) problems.push(`\`${line}\`: ${id} is declared twice`);
      if (messages > 0) problems.push(`\`${line}\`: participants are declared before the first message`);
      if (label !== undefined && /[:"]/.test(label)) problems.push(`\`${line}\`: a label holds no colon or double quote`);
      declared.add(id!);
    } else if ((m = new RegExp(`^(${ID})(-->>|->>)(${ID}): (${TEXT})$`).exec(line))) {
      known(m[1]!, line);
      known(m[3]!, line);
      messages++;
    } else if ((m = new RegExp(`^Note (over|left of|right of) (${ID})(?:,(${ID}))?: (${TEXT})$`).exec(line))) {
      known(m[2]!, line);
      if (m[3] !== undefined) {
        known(m[3], line);
        if (m[1] !== 'over') problems.push(`\`${line}\`: only "Note over" spans two participants`);
      }
    } else if ((m = new RegExp(`^(alt|loop|opt) (${TEXT})$`).exec(line))) {
      blocks.push(m[1]!);
    } else if (new RegExp(`^else(?: ${TEXT})?$`).test(line)) {
      if (blocks.at(-1) !== 'alt') problems.push(`\`${line}\`: else outside alt`);
    } else if (line === 'end') {
      if (blocks.pop() === undefined) problems.push('`end` without a block to close');
    } else {
      problems.push(`\`${line}\`: not a statement of the checked subset`);
    }
  }
  if (blocks.length > 0) problems.push(`${blocks.join(', ')} not closed by end`);
  if (messages === 0) problems.push('no message');
  return problems;
}

const all = pages.flatMap(diagrams);

describe('sequence diagrams in README.md and docs/*.md', () => {
  it('the checker refuses what Mermaid would refuse or draw wrong', () => {
    const ok = ['sequenceDiagram', 'participant A', 'participant B as Bee', 'A->>B: hi'];
    expect(checkSequenceDiagram(ok)).toEqual([]);
    expect(checkSequenceDiagram(['graph TD', 'A-->B'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'A->>C: to nobody'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'A->B: open arrow'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'alt yes', 'A->>B: x'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'else stray', 'end'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'A->>B: a; b'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'participant end'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'Note right of A,B: two'])).not.toEqual([]);
    expect(checkSequenceDiagram([...ok, 'alt yes', 'A->>B: x', 'else no', 'B-->>A: y', 'end', 'Note over A,B: fine'])).toEqual([]);
  });

  it('the pages draw the exchanges where several parties take part', () => {
    const where = (page: string) => all.filter((d) => d.where.startsWith(`${page}:`)).map((d) => d.lines.join('\n'));
    // The client credentials exchange, a key-pair assertion, federated credentials (platform, workload,
    // your API, the issuer's keys) and a revocation reaching every instance through the store.
    expect(where('docs/clients.md').join('\n')).toMatch(/grant_type=client_credentials/);
    expect(where('docs/private-key-jwt.md').join('\n')).toMatch(/client_assertion/);
    expect(where('docs/federated-credentials.md').join('\n')).toMatch(/participant Platform[\s\S]*participant Workload[\s\S]*participant API[\s\S]*participant Keys/);
    expect(where('docs/revocation-and-introspection.md').join('\n')).toMatch(/participant A [\s\S]*participant Store[\s\S]*participant B /);
  });

  it.each(all.map((d) => [d.where, d] as const))('%s is a valid sequence diagram', (_where, diagram) => {
    expect(checkSequenceDiagram(diagram.lines)).toEqual([]);
  });
});
