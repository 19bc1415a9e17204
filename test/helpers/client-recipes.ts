/**
 * The client recipes of docs/clients.md, by name: the code block right after a
 * `<!-- client-recipe: NAME -->` marker, as the page shows it. Shared by the tests that run them.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const PAGE = readFileSync(join(resolve(__dirname, '..', '..'), 'docs', 'clients.md'), 'utf8');

/** The block after `<!-- client-recipe: name -->` in docs/clients.md; throws when the page has none. */
export function clientRecipe(name: string): string {
  const found = new RegExp(`^<!-- client-recipe: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(PAGE);
  if (!found) throw new Error(`docs/clients.md: no block after <!-- client-recipe: ${name} -->`);
  return found[1]!;
}
