// The form asking for an access token when the API answers 401.

import { h } from '../util/dom.js';

const LABELS = {
  metrics_token: ['Metrics token', 'The server runs with --metrics_token. It is sent as "Authorization: Bearer <token>".'],
  tenant_token: ['Tenant token', 'The server runs with --auth_tokens. Your tenant\'s token is sent as "X-Kiln-Token".'],
};

const pending = new Map();   // kind -> promise of the token

/** Shows the token form for a kind ('metrics_token' or 'tenant_token') once; resolves with the token typed. */
export function askToken(kind, message, previous) {
  if (pending.has(kind)) return pending.get(kind);
  const p = new Promise(resolve => {
    const [title, help] = LABELS[kind];
    const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, 'aria-label': title, 'data-test': 'token-input' });
    const form = h('form', { class: 'token-form card', 'data-test': 'token-form', 'data-needs': kind },
      h('h2', {}, `${title} needed`),
      h('p', { class: 'muted' }, help),
      previous ? h('p', { class: 'error', 'data-test': 'token-refused' }, `The server refused that token: ${message}`) : null,
      h('label', {}, title, input),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button primary', 'data-test': 'token-submit' }, 'Continue')));
    const overlay = h('div', { class: 'overlay' }, form);
    form.addEventListener('submit', ev => {
      ev.preventDefault();
      const v = input.value.trim();
      if (!v) return;
      overlay.remove();
      pending.delete(kind);
      resolve(v);
    });
    document.body.appendChild(overlay);
    input.focus();
  });
  pending.set(kind, p);
  return p;
}
