/**
 * Writes docs/admin-openapi.json: the admin router's OpenAPI 3.1 document for the mount `/admin`,
 * generated from the schemas and routes the router runs with. Run after changing either
 * (`npm run docs:admin-openapi`); test/admin-router/admin-openapi.test.ts fails while the file is stale.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildAdminOpenApiDocument } from '../src/index.js';

const target = resolve(__dirname, '..', 'docs', 'admin-openapi.json');
writeFileSync(target, `${JSON.stringify(buildAdminOpenApiDocument({ mountPath: '/admin' }), null, 2)}\n`);
console.log(`wrote ${target}`);
