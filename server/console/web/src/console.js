// Entry of the console page: top bar and hash routes (#/overview, #/functions, #/function/<id>, #/sessions).

import { h, replace } from './util/dom.js';
import { apiGet } from './app/api.js';
import { overviewView } from './views/overview.js';
import { functionsView } from './views/functions.js';
import { functionView } from './views/function.js';
import { sessionsView } from './views/sessions.js';

const ROUTES = [
  { re: /^#\/overview$/, nav: 'overview', title: 'Overview', view: overviewView },
  { re: /^#\/functions$/, nav: 'functions', title: 'Functions', view: functionsView },
  { re: /^#\/function\/(.+)$/, nav: 'functions', title: 'Function', view: (m, c, id) => functionView(m, c, decodeURIComponent(id)) },
  { re: /^#\/sessions$/, nav: 'sessions', title: 'Sessions', view: sessionsView },
];

function topBar() {
  const link = (nav, text) => h('a', { href: `#/${nav}`, 'data-nav': nav, 'data-test': `nav-${nav}` }, text);
  const version = h('span', { class: 'version', 'data-test': 'server-version' });
  const bar = h('header', { class: 'topbar' },
    h('a', { class: 'brand', href: '#/overview' }, h('span', { class: 'brand-mark' }, 'K'), 'Kiln console'),
    h('nav', {}, link('overview', 'Overview'), link('functions', 'Functions'), link('sessions', 'Sessions')),
    h('span', { class: 'grow' }), version);
  return { bar, version };
}

/** Starts the console in document.body. */
export function start() {
  const { bar, version } = topBar();
  const main = h('main', { class: 'main' });
  replace(document.body, bar, main);
  const setVersion = v => { version.textContent = v ? `kiln-server ${v}` : ''; };
  let cleanup = null, gen = 0;

  const route = () => {
    if (cleanup) { try { cleanup(); } catch (e) { /* a view's cleanup must not stop navigation */ } }
    cleanup = null;
    const mine = ++gen;
    let r = ROUTES[0], m = null;
    for (const x of ROUTES) if ((m = x.re.exec(location.hash))) { r = x; break; }
    for (const a of bar.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.nav === r.nav);
    document.title = `${r.title} · Kiln console`;
    replace(main);
    window.scrollTo(0, 0);
    cleanup = r.view(main, { alive: () => mine === gen, setVersion }, ...(m ? m.slice(1) : []));
    return r;
  };
  window.addEventListener('hashchange', route);
  // The overview sets the version itself; other first views ask for it.
  if (route().view !== overviewView) apiGet('overview').then(d => setVersion(d && d.version), () => {});
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
