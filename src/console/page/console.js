// @ts-check
/**
 * The self-service page of express-service-accounts: lists the signed-in person's service accounts
 * and changes them through the admin router mounted beside it (`api/`). Plain DOM, no framework, no
 * HTML strings (the page runs under Trusted Types), no storage: a new secret lives only in its
 * dialog, which is removed from the page when it closes.
 */
(() => {
  'use strict';
  const root = /** @type {HTMLElement} */ (document.getElementById('esa-console'));
  /** @type {Record<string, string>} */
  const S = JSON.parse(root.dataset.strings || '{}');
  const lang = root.dataset.lang || 'en';
  const API = 'api/service-accounts';
  /** What the server's account store cannot hold: its buttons are not offered. */
  const storeLacks = new Set((root.dataset.storeLacks || '').split(' '));
  /** The refusal texts the host gave (a translation): shown instead of the server's own English words. */
  const ownRefusals = new Set((root.dataset.ownRefusals || '').split(' '));
  const dates = new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' });
  let uid = 0;

  /** A text, placeholders filled. @param {string} key @param {Record<string, string>} [values] */
  const t = (key, values = {}) => (S[key] ?? key).replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));
  /** @param {string | null | undefined} iso */
  const when = (iso) => (iso ? dates.format(new Date(iso)) : '');

  /**
   * An element: attributes (`on…` are listeners, `text` its text), then children (text or nodes).
   * @param {string} tag @param {Record<string, any>} [attrs] @param {...(Node | string | null | undefined | false)} children
   */
  function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
      else if (name === 'text') el.textContent = value;
      else if (name === 'value') /** @type {HTMLInputElement} */ (el).value = value;
      else el.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) if (child) el.append(child);
    return el;
  }
  const nextId = (/** @type {string} */ prefix) => `esa-${prefix}-${++uid}`;

  // Messages: successes are announced politely, refusals at once.
  const status = h('p', { class: 'esa-status', role: 'status' });
  const alert = h('p', { class: 'esa-alert', role: 'alert' });
  const say = (/** @type {string} */ text) => {
    alert.textContent = '';
    status.textContent = text;
  };
  const complain = (/** @type {unknown} */ error) => {
    status.textContent = '';
    alert.textContent = `${S.errorPrefix} ${error instanceof Error ? error.message : String(error)}`;
  };

  /**
   * The text of each kind of refusal, by the name its problem type ends with (docs/errors.md).
   * @type {Record<string, string>}
   */
  const REFUSALS = {
    'invalid-request': 'refusedInvalid',
    forbidden: 'refusedForbidden',
    'cross-origin-request': 'refusedForbidden',
    'not-found': 'refusedNotFound',
    'secret-limit-reached': 'refusedLimit',
    'payload-too-large': 'refusedTooLarge',
    'service-unavailable': 'refusedUnavailable',
    'server-error': 'refusedServerError',
    'unsupported-media-type': 'refusedServerError',
    'method-not-allowed': 'refusedServerError',
  };
  /**
   * Without a problem type (a proxy's answer), the kind its status says; any other is `refusedServerError`.
   * @type {Record<number, string>}
   */
  const REFUSALS_BY_STATUS = {
    400: 'refusedInvalid',
    403: 'refusedForbidden',
    404: 'refusedNotFound',
    408: 'refusedUnavailable',
    413: 'refusedTooLarge',
    429: 'refusedUnavailable',
    502: 'refusedUnavailable',
    503: 'refusedUnavailable',
    504: 'refusedUnavailable',
  };

  /**
   * A readable message from an answer that refused: the host's text for its kind when the host gave
   * one, else the server's own words (with each field it names), else the default text of its kind.
   * @param {number} statusCode @param {any} problem
   */
  function problemMessage(statusCode, problem) {
    if (statusCode === 401) return S.sessionExpired;
    const name = typeof problem?.type === 'string' ? /#admin-([a-z-]+)$/.exec(problem.type)?.[1] : undefined;
    const kind = (name && Object.hasOwn(REFUSALS, name) ? REFUSALS[name] : undefined) || REFUSALS_BY_STATUS[statusCode] || 'refusedServerError';
    if (ownRefusals.has(kind)) return S[kind];
    if (problem && typeof problem.detail === 'string') {
      // Only well-formed items: a proxy's problem may carry `errors` of another shape.
      const fields = Array.isArray(problem.errors)
        ? problem.errors
            .filter((/** @type {any} */ e) => typeof e?.pointer === 'string' && typeof e.detail === 'string')
            .map((/** @type {any} */ e) => `${e.pointer.replace(/^\//, '') || '/'}: ${e.detail}`)
        : [];
      return [problem.detail, ...fields].join('. ');
    }
    return S[kind];
  }

  /**
   * One call to the admin router. Changes are JSON with a header no form can send.
   * @param {string} method @param {string} path @param {unknown} [body]
   */
  async function call(method, path, body) {
    /** @type {RequestInit} */
    const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json, application/problem+json' } };
    if (method !== 'GET') {
      init.headers = { ...init.headers, 'Content-Type': 'application/json', 'X-Requested-With': 'express-service-accounts-console' };
      init.body = JSON.stringify(body ?? {});
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch {
      throw new Error(S.networkError);
    }
    const data = await res.json().catch(() => undefined);
    if (!res.ok) throw new Error(problemMessage(res.status, data));
    return { data, link: res.headers.get('Link') };
  }

  /** Every account, following the `Link: <…>; rel="next"` pages. */
  async function listAccounts() {
    const accounts = [];
    let next = `${API}?limit=500`;
    for (let page = 0; next && page < 50; page++) {
      const { data, link } = await call('GET', next);
      accounts.push(...data);
      next = /<([^>]+)>;\s*rel="next"/.exec(link || '')?.[1] ?? '';
    }
    return accounts;
  }

  /**
   * A modal dialog, removed from the page when it closes; focus goes back where it was.
   * @param {string} title @param {(dialog: HTMLDialogElement, alert: HTMLElement) => Node[]} build
   */
  function openDialog(title, build) {
    const opener = document.activeElement;
    const headingId = nextId('dialog-title');
    const dialogAlert = h('p', { class: 'esa-alert', role: 'alert' });
    const dialog = /** @type {HTMLDialogElement} */ (h('dialog', { class: 'esa-dialog', 'aria-labelledby': headingId }));
    dialog.append(h('h2', { id: headingId, text: title }), ...build(dialog, dialogAlert), dialogAlert);
    dialog.addEventListener('close', () => {
      for (const input of dialog.querySelectorAll('input, textarea')) /** @type {HTMLInputElement} */ (input).value = '';
      dialog.remove();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
    return dialog;
  }

  /** Asks before a change that cannot be undone; resolves whether to go on. @param {string} message @param {string} action */
  function confirmAction(message, action) {
    return new Promise((resolve) => {
      let confirmed = false;
      const dialog = openDialog(S.confirmTitle, (d) => [
        h('p', { text: message }),
        h(
          'div',
          { class: 'esa-buttons' },
          h('button', { type: 'button', class: 'esa-button', autofocus: true, text: S.cancel, onclick: () => d.close() }),
          h('button', { type: 'button', class: 'esa-button esa-danger', text: action, onclick: () => ((confirmed = true), d.close()) }),
        ),
      ]);
      dialog.addEventListener('close', () => resolve(confirmed));
    });
  }

  /**
   * Shows a new secret this once, and when it expires.
   * @param {string} name @param {string} clientId @param {string} value @param {string | null} expiresAt
   */
  function showSecret(name, clientId, value, expiresAt) {
    return new Promise((resolve) => {
      const idField = nextId('client-id');
      const secretField = nextId('secret');
      const copyStatus = h('p', { class: 'esa-status', role: 'status' });
      const dialog = openDialog(t('secretTitle', { name }), (d) => {
        const expiryNote = nextId('expiry');
        const secret = /** @type {HTMLInputElement} */ (h('input', { id: secretField, class: 'esa-secret', readonly: true, autocomplete: 'off', spellcheck: 'false', value, 'aria-describedby': expiryNote }));
        const copy = async () => {
          try {
            await navigator.clipboard.writeText(secret.value);
            copyStatus.textContent = S.copied;
          } catch {
            secret.select();
            copyStatus.textContent = S.copyFailed;
          }
        };
        return [
          h('p', { class: 'esa-warning', text: S.secretWarning }),
          h('p', { id: expiryNote, text: expiresAt ? t('secretExpiresAt', { date: when(expiresAt) }) : S.secretNoExpiry }),
          h('label', { for: idField, text: S.clientIdLabel }),
          h('input', { id: idField, readonly: true, value: clientId, spellcheck: 'false' }),
          h('label', { for: secretField, text: S.secretLabel }),
          h('div', { class: 'esa-copy' }, secret, h('button', { type: 'button', class: 'esa-button', text: S.copy, onclick: copy })),
          copyStatus,
          h('div', { class: 'esa-buttons' }, h('button', { type: 'button', class: 'esa-button esa-primary', text: S.secretDone, onclick: () => d.close() })),
        ];
      });
      dialog.addEventListener('close', () => resolve(undefined));
    });
  }

  /**
   * A form field: label, input and hint tied together.
   * @param {string} label @param {Record<string, any>} attrs @param {string} [hint] @param {string} [tag]
   */
  function field(label, attrs, hint, tag = 'input') {
    const id = nextId('field');
    const hintId = hint ? nextId('hint') : undefined;
    return h(
      'div',
      { class: 'esa-field' },
      h('label', { for: id, text: label }),
      hint ? h('p', { id: hintId, class: 'esa-hint', text: hint }) : null,
      h(tag, { id, 'aria-describedby': hintId, ...attrs }),
    );
  }

  /**
   * A dialog with a form whose submission is one call; on success the dialog closes, then what `run`
   * returned, if anything, runs.
   * @param {string} title @param {(Node | null)[]} fields (null: not offered) @param {string} submit @param {(form: HTMLFormElement) => Promise<void | (() => void | Promise<void>)>} run
   */
  function formDialog(title, fields, submit, run) {
    openDialog(title, (d, dialogAlert) => {
      const form = /** @type {HTMLFormElement} */ (h('form', { class: 'esa-form', novalidate: false }));
      form.append(
        ...fields.filter((field) => field !== null),
        h(
          'div',
          { class: 'esa-buttons' },
          h('button', { type: 'button', class: 'esa-button', text: S.cancel, onclick: () => d.close() }),
          h('button', { type: 'submit', class: 'esa-button esa-primary', text: submit }),
        ),
      );
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        dialogAlert.textContent = '';
        const button = /** @type {HTMLButtonElement} */ (form.querySelector('[type=submit]'));
        button.disabled = true;
        try {
          const after = await run(form);
          d.close();
          if (after) Promise.resolve(after()).catch(complain);
        } catch (error) {
          dialogAlert.textContent = `${S.errorPrefix} ${error instanceof Error ? error.message : String(error)}`;
        } finally {
          button.disabled = false;
        }
      });
      return [form];
    });
  }

  /** The server's bound on a new credential's lifetime, in seconds, if it sets one. */
  const maxLifetime = Number(root.dataset.maxCredentialLifetime) || undefined;
  /** A lifetime in words, in the largest unit that says it exactly ("45 days", "12 hours"). @param {number} seconds */
  function lifetimeText(seconds) {
    const [unit, size] = /** @type {[string, number]} */ (
      [['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]].find(([, s]) => seconds % /** @type {number} */ (s) === 0)
    );
    return new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'long' }).format(seconds / size);
  }
  /** The lifetimes offered (value sent, days), and the server's bound in words, if it sets one. */
  const presets = [['30d', 30], ['90d', 90], ['180d', 180], ['365d', 365]];
  const limit = maxLifetime === undefined ? undefined : lifetimeText(maxLifetime);
  /**
   * The expiry of a new credential, sent as `expiresIn`: never, or one of a few lifetimes. When the
   * server bounds a credential's lifetime, only the shorter lifetimes and the longest allowed are
   * offered (that one chosen), and never is not. None when the store cannot keep an expiry (and the
   * server requires none): every credential then lives until revoked.
   * @param {string} [label]
   */
  function expiryField(label = S.expiryLabel) {
    if (storeLacks.has('credentialExpiry') && limit === undefined) return null;
    const wrapper = field(label, { name: 'expiresIn' }, limit === undefined ? S.expiryHint : t('expiryLimitHint', { duration: limit }), 'select');
    const options =
      limit === undefined
        ? [h('option', { value: '', text: S.expiryNever }), ...presets.map(([value]) => h('option', { value, text: S[`expiry${value}`] }))]
        : [
            ...presets.filter(([, days]) => /** @type {number} */ (days) * 86400 < /** @type {number} */ (maxLifetime)).map(([value]) => h('option', { value, text: S[`expiry${value}`] })),
            h('option', { value: `${maxLifetime}s`, text: t('expiryLongest', { duration: limit }), selected: true }),
          ];
    /** @type {HTMLSelectElement} */ (wrapper.querySelector('select')).append(...options);
    return wrapper;
  }

  const valueOf = (/** @type {HTMLFormElement} */ form, /** @type {string} */ name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name)).value.trim();
  const accountPath = (/** @type {string} */ clientId) => `${API}/${encodeURIComponent(clientId)}`;
  /** `{ expiresIn }` as chosen, or nothing for never. @param {HTMLFormElement} form */
  const expiryOf = (form) => {
    const expiresIn = form.elements.namedItem('expiresIn') ? valueOf(form, 'expiresIn') : '';
    return expiresIn ? { expiresIn } : {};
  };

  /** @param {any} account */
  function addKey(account) {
    const keyField = field(S.keyLabel, { name: 'publicKey', required: true, rows: 8, spellcheck: 'false', class: 'esa-mono' }, S.keyHint, 'textarea');
    const textarea = /** @type {HTMLTextAreaElement} */ (keyField.querySelector('textarea'));
    const fileField = field(S.keyFile, {
      type: 'file',
      accept: '.pem,.crt,.cer,.jwk,.json,.pub,application/json,application/x-pem-file',
      onchange: async (/** @type {Event} */ event) => {
        const file = /** @type {HTMLInputElement} */ (event.target).files?.[0];
        if (!file) return;
        if (file.size > 65536) return complainIn(textarea, S.fileTooLarge);
        textarea.value = await file.text();
      },
    });
    formDialog(t('keyTitle', { name: account.name }), [keyField, fileField, expiryField()], S.keyAdd, async (form) => {
      const { data } = await call('POST', `${accountPath(account.clientId)}/keys`, { publicKey: valueOf(form, 'publicKey'), ...expiryOf(form) });
      // Added: a list that cannot be reloaded is said on the page, not as a refusal in this dialog.
      return () => refresh(account.clientId, t('added_key', { id: data.id, name: account.name }));
    });
  }
  /** @param {HTMLElement} near @param {string} message */
  function complainIn(near, message) {
    const dialogAlert = near.closest('dialog')?.querySelector('.esa-alert');
    if (dialogAlert) dialogAlert.textContent = message;
  }

  /** @param {any} account */
  function addFederated(account) {
    formDialog(
      t('federatedTitle', { name: account.name }),
      [
        field(S.issuerLabel, { name: 'issuer', type: 'url', required: true, spellcheck: 'false' }, S.issuerHint),
        field(S.subjectLabel, { name: 'subject', required: true, spellcheck: 'false' }, S.subjectHint),
        field(S.audienceLabel, { name: 'audience', spellcheck: 'false' }, S.audienceHint),
        expiryField(),
      ],
      S.federatedAdd,
      async (form) => {
        const audience = valueOf(form, 'audience');
        const body = { issuer: valueOf(form, 'issuer'), subject: valueOf(form, 'subject'), ...(audience && { audience }), ...expiryOf(form) };
        const { data } = await call('POST', `${accountPath(account.clientId)}/federated`, body);
        return () => refresh(account.clientId, t('added_federated', { id: data.id, name: account.name }));
      },
    );
  }

  /** Asks when the new secret expires, adds it, then shows it (even if the list cannot be reloaded). @param {any} account */
  function addSecret(account) {
    formDialog(t('secretAddTitle', { name: account.name }), [expiryField()], S.secretAdd, async (form) => {
      const { data } = await call('POST', `${accountPath(account.clientId)}/secrets`, expiryOf(form));
      return async () => {
        await refresh(account.clientId, t('added_secret', { name: account.name })).catch(complain);
        await showSecret(account.name, account.clientId, data.value, data.expiresAt);
      };
    });
  }

  /** The server's bound on an account's token lifetime, in seconds, and whether it offers DPoP. */
  const maxTokenLifetime = Number(root.dataset.maxAccessTokenLifetime) || undefined;
  const dpopOffered = root.dataset.dpop !== 'off';
  /** The token lifetimes offered, in seconds, up to the server's bound. */
  const tokenPresets = [300, 900, 3600, 28800, 86400];
  /** A token lifetime as offered: the server's bound is "the longest allowed", and one above it says so. @param {number} seconds */
  function lifetimeChoice(seconds) {
    if (maxTokenLifetime === undefined || seconds < maxTokenLifetime) return lifetimeText(seconds);
    if (seconds === maxTokenLifetime) return t('tokenLifetimeLongest', { duration: lifetimeText(seconds) });
    return t('tokenLifetimeAbove', { duration: lifetimeText(seconds), limit: lifetimeText(maxTokenLifetime) });
  }
  /** An account's own token lifetime as its card states it. @param {number} seconds */
  const lifetimeFact = (seconds) =>
    maxTokenLifetime !== undefined && seconds > maxTokenLifetime ? lifetimeChoice(seconds) : lifetimeText(seconds);

  /**
   * Changes the account's token policy: its tokens' lifetime, and whether they must be DPoP-bound.
   * Only what was changed is sent, so a setting the server no longer allows is kept, not refused.
   * @param {any} account
   */
  function tokenSettings(account) {
    const current = account.accessTokenLifetime ?? null;
    const lifetimes = tokenPresets.filter((seconds) => maxTokenLifetime === undefined || seconds < maxTokenLifetime);
    if (maxTokenLifetime !== undefined) lifetimes.push(maxTokenLifetime);
    if (current !== null && !lifetimes.includes(current)) lifetimes.push(current);
    lifetimes.sort((a, b) => a - b);
    const lifetimeField = field(S.tokenLifetimeLabel, { name: 'accessTokenLifetime' }, S.tokenLifetimeHint, 'select');
    /** @type {HTMLSelectElement} */ (lifetimeField.querySelector('select')).append(
      h('option', { value: '', text: S.tokenLifetimeServer, selected: current === null }),
      ...lifetimes.map((seconds) => h('option', { value: String(seconds), text: lifetimeChoice(seconds), selected: seconds === current })),
    );
    // On a server without DPoP, an account that still requires it can get no token: it is offered
    // the way out (clearing the requirement), and nothing else.
    const requiresDpop = account.dpopBoundAccessTokens === true;
    const dpopId = nextId('dpop');
    const dpopHintId = nextId('hint');
    const dpopField =
      dpopOffered || requiresDpop
        ? h(
            'div',
            { class: 'esa-field esa-check' },
            h('input', { id: dpopId, type: 'checkbox', name: 'dpopBoundAccessTokens', checked: requiresDpop, 'aria-describedby': dpopHintId }),
            h('label', { for: dpopId, text: S.dpopLabel }),
            h('p', { id: dpopHintId, class: 'esa-hint', text: dpopOffered ? S.dpopHint : S.dpopOffHint }),
          )
        : null;
    formDialog(t('tokenSettingsTitle', { name: account.name }), dpopField ? [lifetimeField, dpopField] : [lifetimeField], S.tokenSettingsSave, async (form) => {
      const chosen = valueOf(form, 'accessTokenLifetime');
      const lifetime = chosen === '' ? null : Number(chosen);
      /** @type {Record<string, unknown>} */
      const change = {};
      if (lifetime !== current) change.accessTokenLifetime = lifetime;
      const dpop = /** @type {HTMLInputElement | null} */ (form.elements.namedItem('dpopBoundAccessTokens'));
      if (dpop && dpop.checked !== requiresDpop) change.dpopBoundAccessTokens = dpop.checked;
      // Nothing changed: the dialog just closes.
      if (Object.keys(change).length === 0) return undefined;
      await call('POST', `${accountPath(account.clientId)}/policy`, change);
      return () => refresh(account.clientId, t('saved_policy', { name: account.name }));
    });
  }

  /** @param {any} account @param {'secret' | 'key' | 'federated'} kind @param {string} id */
  async function revoke(account, kind, id) {
    const prompts = { secret: 'confirmRevokeSecret', key: 'confirmRevokeKey', federated: 'confirmRevokeFederated' };
    const paths = { secret: 'secrets', key: 'keys', federated: 'federated' };
    if (!(await confirmAction(t(prompts[kind], { id, name: account.name }), S.revoke))) return;
    try {
      await call('DELETE', `${accountPath(account.clientId)}/${paths[kind]}/${encodeURIComponent(id)}`);
      await refresh(account.clientId, t(`revoked_${kind}`, { id, name: account.name }));
    } catch (error) {
      complain(error);
    }
  }

  /** @param {any} account */
  async function setEnabled(account) {
    const enabling = !account.enabled;
    if (!enabling && !(await confirmAction(t('confirmDisable', { name: account.name }), S.disable))) return;
    try {
      await call('POST', `${accountPath(account.clientId)}/${enabling ? 'enable' : 'disable'}`);
      await refresh(account.clientId, t(enabling ? 'enabled_account' : 'disabled_account', { name: account.name }));
    } catch (error) {
      complain(error);
    }
  }

  /**
   * What tells a federated credential apart: its issuer and subject, and the audience and claim
   * conditions its issuer's tokens must also carry (two credentials of one issuer and subject differ
   * only there).
   * @param {any} credential
   */
  function federatedDetail(credential) {
    const claims = credential.claims ? Object.entries(credential.claims).map(([name, value]) => `${name} = ${value}`) : [];
    return [
      h('span', { class: 'esa-hint', text: `${credential.issuer} · ${credential.subject}` }),
      credential.audience ? h('span', { class: 'esa-hint', text: t('federatedAudience', { audience: credential.audience }) }) : null,
      claims.length ? h('span', { class: 'esa-hint', text: t('federatedClaims', { claims: claims.join(', ') }) }) : null,
    ];
  }

  /** One row per credential, secrets first. @param {any} account */
  function credentialRows(account) {
    const now = Date.now();
    /** @type {[string, 'secret' | 'key' | 'federated', any][]} */
    const all = [
      ...account.secrets.map((/** @type {any} */ c) => [S.kindSecret, 'secret', c]),
      ...account.keys.map((/** @type {any} */ c) => [S.kindKey, 'key', c]),
      ...account.federated.map((/** @type {any} */ c) => [S.kindFederated, 'federated', c]),
    ];
    return all.map(([label, kind, credential]) => {
      const expired = credential.expiresAt && new Date(credential.expiresAt).getTime() <= now;
      const state = credential.revokedAt ? t('revokedAt', { date: when(credential.revokedAt) }) : expired ? S.expired : S.live;
      const detail = kind === 'federated' ? federatedDetail(credential) : kind === 'key' ? [h('span', { class: 'esa-hint', text: credential.thumbprint })] : [];
      const cell = (/** @type {string} */ heading, /** @type {...(Node | string | null)} */ ...content) => h('td', { 'data-label': heading }, ...content);
      return h(
        'tr',
        { class: credential.revokedAt ? 'esa-revoked' : undefined },
        cell(S.kind, label),
        cell(S.id, h('code', { text: credential.id }), ...detail),
        cell(S.created, when(credential.createdAt)),
        cell(S.lastUsed, credential.lastUsedAt ? when(credential.lastUsedAt) : S.never),
        cell(S.expires, credential.expiresAt ? when(credential.expiresAt) : S.noExpiry),
        cell(S.state, state),
        cell(
          S.actions,
          credential.revokedAt
            ? null
            : h('button', {
                type: 'button',
                class: 'esa-button esa-danger esa-small',
                text: S.revoke,
                'aria-label': t('revokeLabel', { kind: label.toLowerCase(), id: credential.id }),
                onclick: () => revoke(account, kind, credential.id),
              }),
        ),
      );
    });
  }

  /** @param {any} account */
  function accountView(account) {
    const headingId = nextId('account');
    const rows = credentialRows(account);
    const columns = [S.kind, S.id, S.created, S.lastUsed, S.expires, S.state, S.actions];
    return h(
      'article',
      { class: 'esa-account', 'aria-labelledby': headingId, 'data-client-id': account.clientId },
      h(
        'div',
        { class: 'esa-account-head' },
        h('h3', { id: headingId, tabindex: '-1', text: account.name }),
        h('span', { class: `esa-badge ${account.enabled ? 'esa-on' : 'esa-off'}`, text: account.enabled ? S.enabled : S.disabled }),
      ),
      h(
        'dl',
        { class: 'esa-facts' },
        h('dt', { text: S.clientId }),
        h('dd', {}, h('code', { text: account.clientId })),
        h('dt', { text: S.scopes }),
        h('dd', { text: account.scopes.length ? account.scopes.join(' ') : S.unrestricted }),
        h('dt', { text: S.resources }),
        h('dd', { text: account.resources?.length ? account.resources.join(' ') : S.resourcesDefault }),
        h('dt', { text: S.tokenLifetime }),
        h('dd', { text: account.accessTokenLifetime ? lifetimeFact(account.accessTokenLifetime) : S.tokenLifetimeDefault }),
        h('dt', { text: S.dpop }),
        h('dd', { text: account.dpopBoundAccessTokens ? S.dpopRequired : S.dpopOptional }),
        h('dt', { text: S.created }),
        h('dd', { text: when(account.createdAt) }),
      ),
      rows.length
        ? h(
            'table',
            { class: 'esa-credentials' },
            h('caption', { text: t('credentials', { name: account.name }) }),
            h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', text: c })))),
            h('tbody', {}, ...rows),
          )
        : h('p', { class: 'esa-hint', text: S.noCredentials }),
      h(
        'div',
        { class: 'esa-buttons' },
        h('button', { type: 'button', class: 'esa-button', text: S.addSecret, onclick: () => addSecret(account) }),
        storeLacks.has('keys') ? null : h('button', { type: 'button', class: 'esa-button', text: S.addKey, onclick: () => addKey(account) }),
        storeLacks.has('federated') ? null : h('button', { type: 'button', class: 'esa-button', text: S.addFederated, onclick: () => addFederated(account) }),
        storeLacks.has('accountPolicy') ? null : h('button', { type: 'button', class: 'esa-button', text: S.tokenSettings, onclick: () => tokenSettings(account) }),
        h('button', { type: 'button', class: `esa-button${account.enabled ? ' esa-danger' : ''}`, text: account.enabled ? S.disable : S.enable, onclick: () => setEnabled(account) }),
      ),
    );
  }

  const list = h('div', { class: 'esa-list', 'aria-busy': 'true' }, h('p', { text: S.loading }));
  /** Focus goes to an account's heading. @param {string} clientId */
  const focusAccount = (clientId) =>
    /** @type {HTMLElement | null | undefined} */ ([...list.querySelectorAll('article')].find((a) => a.dataset.clientId === clientId)?.querySelector('h3'))?.focus();

  /**
   * Reloads the list; with a client ID, focus goes to that account's heading (the buttons that had it
   * are replaced), and `message` is announced.
   * @param {string} [focusClientId] @param {string} [message]
   */
  async function refresh(focusClientId, message) {
    list.setAttribute('aria-busy', 'true');
    try {
      const accounts = await listAccounts();
      list.replaceChildren(...(accounts.length ? accounts.map(accountView) : [h('p', { text: S.empty })]));
      if (message) say(message);
      if (focusClientId) focusAccount(focusClientId);
    } finally {
      list.setAttribute('aria-busy', 'false');
    }
  }

  const createForm = /** @type {HTMLFormElement} */ (
    h(
      'form',
      { class: 'esa-form esa-create' },
      field(S.nameLabel, { name: 'name', required: true, maxlength: '200', autocomplete: 'off' }, S.nameHint),
      field(S.scopesLabel, { name: 'scopes', maxlength: '4000', autocomplete: 'off', spellcheck: 'false' }, S.scopesHint),
      expiryField(S.firstSecretExpiryLabel),
      h('div', { class: 'esa-buttons' }, h('button', { type: 'submit', class: 'esa-button esa-primary', text: S.create })),
    )
  );
  createForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = /** @type {HTMLButtonElement} */ (createForm.querySelector('[type=submit]'));
    button.disabled = true;
    try {
      const scopes = valueOf(createForm, 'scopes').split(/\s+/).filter(Boolean);
      const expiry = expiryOf(createForm);
      const { data } = await call('POST', API, { name: valueOf(createForm, 'name'), ...(scopes.length && { scopes }), ...('expiresIn' in expiry && { secret: expiry }) });
      createForm.reset();
      // The secret is shown even when the list cannot be reloaded: it is shown only this once.
      await refresh(undefined, t('created_account', { name: data.name })).catch(complain);
      await showSecret(data.name, data.clientId, data.secret.value, data.secret.expiresAt);
      focusAccount(data.clientId);
    } catch (error) {
      complain(error);
    } finally {
      button.disabled = false;
    }
  });

  const createHeading = nextId('create');
  const listHeading = nextId('list');
  root.append(
    status,
    alert,
    h('section', { class: 'esa-panel', 'aria-labelledby': createHeading }, h('h2', { id: createHeading, text: S.createHeading }), createForm),
    h('section', { class: 'esa-panel', 'aria-labelledby': listHeading }, h('h2', { id: listHeading, text: S.accountsHeading }), list),
  );
  refresh().catch((error) => {
    list.replaceChildren();
    complain(error);
  });
})();
