/**
 * `callbackFramework` (src/token-endpoint/passport-adapter.ts): the passport framework adapter of the token
 * endpoint reports each strategy action to the callback the way passport's Connect adapter does for a
 * custom callback, and leaves the request it is given undecorated.
 */
import { Passport, type Strategy } from 'passport';
import { BasicStrategy } from 'passport-http';
import { describe, expect, it } from 'vitest';
import { callbackFramework, type Attempt, type StrategyCallback } from '../../src/token-endpoint/passport-adapter.js';

type Actions = Record<'success' | 'fail' | 'error' | 'redirect' | 'pass', (...args: unknown[]) => void>;

/** A strategy whose `authenticate` runs `act` with the attempt (and so its actions) as `this`. */
function scripted(act: (attempt: Actions) => void): Strategy {
  return {
    authenticate() {
      act(this as unknown as Actions);
    },
  };
}

function run(strategy: Strategy, req: object = { headers: {} }): unknown[] {
  const passport = new Passport().framework(callbackFramework());
  passport.use('scripted', strategy);
  const calls: unknown[][] = [];
  const callback: StrategyCallback = (...args) => calls.push(args);
  (passport.authenticate('scripted', { session: false }) as unknown as Attempt)(req, callback);
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

describe('callbackFramework', () => {
  it('reports success with the user and info', () => {
    expect(run(scripted((s) => s.success({ id: 1 }, { scope: 'a' })))).toEqual([null, { id: 1 }, { scope: 'a' }]);
  });

  it('reports a failure as false with its challenge and status, or a bare status', () => {
    expect(run(scripted((s) => s.fail('Basic realm="x"', 401)))).toEqual([null, false, 'Basic realm="x"', 401]);
    expect(run(scripted((s) => s.fail(400)))).toEqual([null, false, undefined, 400]);
  });

  it('reports an error, a redirect as an error, and a pass as a failure', () => {
    const boom = new Error('boom');
    expect(run(scripted((s) => s.error(boom)))).toEqual([boom]);
    expect(run(scripted((s) => s.redirect('https://elsewhere.example')))[0]).toBeInstanceOf(Error);
    expect(run(scripted((s) => s.pass()))).toEqual([null, false]);
  });

  it('reports an unknown strategy name as an error', () => {
    const passport = new Passport().framework(callbackFramework());
    let reported: unknown;
    (passport.authenticate('nope', {}) as unknown as Attempt)({}, (err: unknown) => (reported = err));
    expect(String(reported)).toMatch(/Unknown authentication strategy "nope"/);
  });

  it('runs passport-http with the request it is given, without adding passport properties to it', () => {
    const req = { headers: { authorization: `Basic ${Buffer.from('id:secret').toString('base64')}` } };
    const strategy = new BasicStrategy((id, secret, done) => done(null, { id, secret }));
    expect(run(strategy, req)).toEqual([null, { id: 'id', secret: 'secret' }, undefined]);
    expect(Object.keys(req)).toEqual(['headers']);
  });
});
