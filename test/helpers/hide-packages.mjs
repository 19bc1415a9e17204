/**
 * A preload (`node --import tsx --import ./test/helpers/hide-packages.mjs`) that makes the packages
 * named in HIDE_PACKAGES (comma-separated) impossible to find, as when they are not installed: both
 * `import()` (a module resolve hook) and `require()` fail with Node's own not-found error and code.
 */
import Module, { register } from 'node:module';

const hidden = (process.env.HIDE_PACKAGES ?? '').split(',').filter(Boolean);
const hook = `
const hidden = ${JSON.stringify(hidden)};
export async function resolve(specifier, context, next) {
  if (hidden.includes(specifier)) {
    const error = new Error(\`Cannot find package '\${specifier}' imported from \${context.parentURL}\`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (hidden.includes(request)) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolveFilename.call(this, request, ...rest);
};
