/**
 * Walks docs/getting-started.md as a new user would, once in TypeScript (an ES module project run
 * with tsx, type-checked with tsc) and once in CommonJS JavaScript (plain node): in a fresh project
 * outside the repository it writes the files and runs the shell blocks the page marks (see
 * doc-steps.mjs), in the page's order, and compares what each command prints with the output the
 * page shows. The only liberties taken, each a thing a reader does by hand:
 *   - `npm install NAME...` installs the packed tarball for this package and, for the others, the
 *     versions this repository uses, from npm's cache (so no network is needed);
 *   - `localhost:3000` becomes a free port (the app reads PORT), so a busy port 3000 is no failure;
 *   - `export NAME='...'` placeholders get the values a reader copies from earlier output.
 *
 * Usage: node scripts/newcomer/walk.mjs TARBALL WORKDIR
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docSteps, FLAVOURS, matchesOutput } from './doc-steps.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const doc = join(repo, 'docs/getting-started.md');
const [tarball, work] = process.argv.slice(2);
if (!tarball || !work) throw new Error('usage: node walk.mjs TARBALL WORKDIR');

/** What a reader copies from one output into a later `export NAME='...'`, by variable name. */
const COPIED = {
  CLIENT_ID: /^ {2}client ID:\s+(\S+)$/m,
  CLIENT_SECRET: /^ {2}client secret:\s+(\S+)$/m,
  ACCESS_TOKEN: /"access_token":"([^"]+)"/,
};

function repoVersion(name) {
  return JSON.parse(readFileSync(join(repo, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** `npm install a b` with this package's tarball and the repository's versions of the others. */
function pinInstall(script) {
  return script.replace(/^npm install ([^\n]+)$/gm, (_line, args) => {
    const pinned = args.split(/\s+/).map((arg) => {
      if (arg.startsWith('-')) return arg;
      if (arg === 'express-service-accounts') return tarball;
      return `${arg}@${repoVersion(arg)}`;
    });
    return `npm install ${pinned.join(' ')}`;
  });
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

/** Servers the walk started in the background (each the leader of its process group). */
const backgroundServers = new Set();

function fail(message) {
  console.error(`newcomer walk: FAILED: ${message}`);
  // process.exit skips the `finally` that stops the session: stop its servers here, or they outlive us.
  for (const child of backgroundServers) stopServer(child);
  process.exit(1);
}

function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

class Session {
  constructor(flavour, dir, port) {
    this.flavour = flavour;
    this.dir = dir;
    this.port = port;
    this.copied = {};
    this.background = [];
    const env = { ...process.env };
    for (const name of ['SERVICE_ACCOUNTS_STORE', 'TOKEN_SIGNING_KEY', 'CLIENT_ID', 'CLIENT_SECRET', 'ACCESS_TOKEN', 'NODE_OPTIONS']) delete env[name];
    delete env.npm_config_prefix;
    this.env = { ...env, PORT: String(port), npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  }

  localize(text) {
    return text.replaceAll('localhost:3000', `localhost:${this.port}`);
  }

  /** The block as the reader runs it: placeholders filled in, then the environment saved for the next block. */
  prepare(script, envFile) {
    const filled = script.replace(/^export (\w+)='([^'\n]*\.\.\.[^'\n]*)'$/gm, (line, name) => {
      if (this.copied[name] === undefined) fail(`nothing printed so far gives ${name} (${line})`);
      return `export ${name}='${this.copied[name]}'`;
    });
    return `set -euo pipefail\n${this.localize(pinInstall(filled))}\nenv -0 > ${JSON.stringify(envFile)}\n`;
  }

  run(step) {
    const envFile = join(this.dir, '..', `${this.flavour}.env`);
    const script = this.prepare(step.script, envFile);
    if (step.background) return this.start(step, script);
    const label = `${this.flavour}: docs/getting-started.md:${step.line}: ${step.script.trim().split('\n').at(-1)}`;
    console.log(`\n$ ${label}`);
    const result = spawnSyncBash(script, this.dir, this.env);
    process.stdout.write(result.stdout.replace(/(eyJ|esas_)[\w.-]+/g, '$1[redacted]'));
    if (result.status !== 0) fail(`${label} exited with ${result.status}\n${result.stderr}`);
    this.env = readEnv(envFile);
    this.copy(result.stdout);
    if (step.output !== undefined) {
      // npm's own complaints about the machine's npmrc are no part of what the page shows.
      const stderr = result.stderr.split('\n').filter((line) => !line.startsWith('npm warn ')).join('\n').trim();
      if (stderr !== '') fail(`${label} wrote to stderr:\n${result.stderr}`);
      if (!matchesOutput(this.localize(step.output), result.stdout)) fail(`${label} printed something else than the page shows:\n${step.output}`);
    }
  }

  copy(stdout) {
    for (const [name, pattern] of Object.entries(COPIED)) {
      const found = pattern.exec(stdout);
      if (found) this.copied[name] = found[1];
    }
  }

  /** Starts a server block and waits for the output the page shows for it. */
  async start(step, script) {
    console.log(`\n$ ${this.flavour}: docs/getting-started.md:${step.line}: ${step.script.trim()} &`);
    if (step.output === undefined) fail(`docs/getting-started.md:${step.line}: a background block needs an output block`);
    const child = spawn('bash', ['-c', script], { cwd: this.dir, env: this.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.background.push(child);
    backgroundServers.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const expected = this.localize(step.output);
    const deadline = Date.now() + 60_000;
    while (!matchesOutput(expected, stdout)) {
      if (child.exitCode !== null) fail(`the server exited with ${child.exitCode}\n${stdout}${stderr}`);
      if (Date.now() > deadline) fail(`the server did not print within 60 s:\n${expected}\nit printed:\n${stdout}${stderr}`);
      await new Promise((done) => setTimeout(done, 100));
    }
    process.stdout.write(stdout);
    this.server = { script, child };
  }

  /** The page's claim: started twice on one port, the app fails with EADDRINUSE instead of exiting 0. */
  checkPortTaken() {
    const result = spawnSyncBash(this.server.script, this.dir, this.env);
    if (result.status === 0 || !result.stderr.includes('EADDRINUSE')) {
      fail(`a second server on the same port exited with ${result.status}, not with EADDRINUSE:\n${result.stdout}${result.stderr}`);
    }
    console.log(`\nsecond server on the same port: exit ${result.status}, EADDRINUSE (as the page says)`);
  }

  stop() {
    for (const child of this.background) stopServer(child);
  }
}

function spawnSyncBash(script, cwd, env) {
  try {
    const stdout = execFileSync('bash', ['-c', script], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
    return { status: 0, stdout, stderr: '' };
  } catch (error) {
    if (error.status === undefined || error.status === null) throw error;
    return { status: error.status, stdout: error.stdout ?? '', stderr: error.stderr ?? '' };
  }
}

function readEnv(file) {
  const env = {};
  for (const entry of readFileSync(file, 'utf8').split('\0')) {
    const at = entry.indexOf('=');
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}

async function walk(flavour, steps) {
  const dir = join(work, flavour);
  mkdirSync(dir, { recursive: true });
  const session = new Session(flavour, dir, await freePort());
  console.log(`\n==== ${flavour === 'ts' ? 'TypeScript (ES module, tsx + tsc)' : 'CommonJS JavaScript (node)'} in ${dir}`);
  try {
    // "for a new project, run `npm init -y` in an empty folder first"
    spawnSyncBash('npm init -y > /dev/null', dir, session.env);
    // The first project's node_modules, hard-linked: the install then has nothing to compile again.
    const first = join(work, FLAVOURS[0], 'node_modules');
    if (flavour !== FLAVOURS[0] && existsSync(first)) execFileSync('cp', ['-al', first, join(dir, 'node_modules')]);
    for (const step of steps) {
      if (step.kind === 'file' && step.flavour === flavour) writeFileSync(join(dir, step.name), session.localize(step.content));
      if (step.kind === 'run' && step.flavours.includes(flavour)) await session.run(step);
    }
    if (!session.server) fail('the page starts no server');
    session.checkPortTaken();
    if (flavour === 'ts') {
      // tsc ran before the later files were written: check them all now.
      const result = spawnSyncBash('npx tsc', dir, session.env);
      if (result.status !== 0) fail(`tsc over every file of the page:\n${result.stdout}${result.stderr}`);
      console.log('\ntsc over every file of the page: no errors');
    }
  } finally {
    session.stop();
  }
}

const steps = docSteps(doc);
for (const flavour of FLAVOURS) await walk(flavour, steps);
console.log('\nnewcomer walk: docs/getting-started.md works as written, in TypeScript and in CommonJS');
