// #/overview: health, version, tiers, totals and the history charts; refreshed every 5 s.

import { h, replace } from '../util/dom.js';
import { fmtBytes, fmtDuration, fmtInt, fmtTime } from '../util/format.js';
import { apiGet } from '../app/api.js';
import { CHARTS, createChart } from './charts.js';
import { errorBox } from './common.js';

const REFRESH_MS = 5000;

function fact(name, value, attrs = {}) {
  return h('div', { class: 'fact' }, h('div', { class: 'fact-name' }, name), h('div', { class: 'fact-value', ...attrs }, value));
}

function tierRow(t) {
  const cell = v => h('td', { class: 'num' }, v === undefined || v === null ? '–' : v);
  return h('tr', { 'data-test': 'tier', 'data-name': t.name },
    h('td', {}, t.name),
    h('td', {}, h('span', { class: `badge state-${t.state}` }, t.state)),
    cell(t.entries === undefined ? undefined : fmtInt(t.entries)),
    cell(t.bytes === undefined ? undefined : fmtBytes(t.bytes)),
    cell(t.evictions === undefined ? undefined : fmtInt(t.evictions)));
}

/** Renders the overview into main; ctx: {alive(), setVersion(v)}; returns a cleanup function. */
export function overviewView(main, ctx) {
  const facts = h('div', { class: 'facts' });
  const totals = h('div', { class: 'totals' });
  const tiers = h('tbody', {});
  const updated = h('span', { class: 'muted small', 'data-test': 'updated' });
  const problem = h('div', {});
  const charts = CHARTS.map(createChart);
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Overview'), updated),
    problem,
    h('section', { class: 'card' }, facts),
    h('div', { class: 'grid-2' },
      h('section', { class: 'card' }, h('h2', {}, 'Cache tiers'),
        h('table', { class: 'table', 'data-test': 'tiers' },
          h('thead', {}, h('tr', {}, h('th', {}, 'tier'), h('th', {}, 'state'), h('th', { class: 'num' }, 'entries'),
            h('th', { class: 'num' }, 'bytes'), h('th', { class: 'num' }, 'evictions'))),
          tiers)),
      h('section', { class: 'card' }, h('h2', {}, 'Totals'), totals)),
    h('h2', { class: 'section-title' }, 'Last hour'),
    h('div', { class: 'charts' }, charts.map(c => c.element)));

  const show = d => {
    ctx.setVersion(d.version);
    replace(facts,
      fact('health', d.health, { 'data-test': 'health', class: `fact-value health health-${d.health}` }),
      fact('version', d.version || '', { 'data-test': 'version' }),
      fact('instance', d.instance || '', { 'data-test': 'instance', class: 'fact-value mono' }),
      fact('uptime', fmtDuration(d.uptime_seconds), { 'data-test': 'uptime' }),
      d.tenant ? fact('tenant', d.tenant, { 'data-test': 'tenant' }) : null);
    replace(tiers, (d.tiers || []).map(tierRow));
    const t = d.totals || {};
    replace(totals, ['requests', 'errors', 'executions', 'compiles', 'functions', 'sessions'].map(k =>
      h('div', { class: 'total', 'data-test': 'total', 'data-name': k }, h('div', { class: 'total-value' }, fmtInt(t[k] || 0)), h('div', { class: 'total-name' }, k))));
    const samples = ((d.history || {}).samples || []).filter(s => s && typeof s.t === 'number');
    for (const c of charts) c.update(samples);
    updated.textContent = `updated ${fmtTime(Date.now() / 1000).slice(11)} · every ${REFRESH_MS / 1000} s`;
  };

  let timer = null, stopped = false;
  const load = async () => {
    try {
      const d = await apiGet('overview');
      if (stopped || !ctx.alive()) return;
      replace(problem);
      show(d);
    } catch (e) {
      if (stopped || !ctx.alive()) return;
      replace(problem, errorBox(e));
    }
    if (!stopped) timer = setTimeout(load, REFRESH_MS);
  };
  load();
  return () => {
    stopped = true;
    clearTimeout(timer);
    for (const c of charts) c.destroy();
  };
}
