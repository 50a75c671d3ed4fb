// Small pieces shared by the views.

import { h } from '../util/dom.js';

/** A box saying what went wrong with an API call ([data-test=error]). */
export function errorBox(e) {
  return h('div', { class: 'alert', 'data-test': 'error' }, e && e.message ? e.message : String(e));
}

/** A "loading…" line. */
export function loading(what = 'Loading…') {
  return h('p', { class: 'muted loading', 'data-test': 'loading' }, what);
}
