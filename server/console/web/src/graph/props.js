// The side panel with the properties of the selected node (or group).

import { h, replace } from '../util/dom.js';
import { fmtInt, fmtShape } from '../util/format.js';

const MAX_LINKS = 200;

function row(field, name, ...value) {
  return h('div', { class: 'gv-prop', 'data-field': field }, h('dt', {}, name), h('dd', {}, ...value));
}

function link(node, text, goto) {
  return h('button', {
    type: 'button', class: 'gv-link', 'data-test': 'node-link', 'data-goto': node.key,
    title: `${node.label} [${node.key}]`, onclick: () => goto(node.key),
  }, text);
}

function propValue(v) {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function section(title, items) {
  if (!items.length) return null;
  return h('section', { class: 'gv-props-section' }, h('h4', {}, title), h('ul', { class: 'gv-props-list' }, items.map(i => h('li', {}, i))));
}

function edgeFlags(e) {
  return [e.destroyed ? h('span', { class: 'gv-flag gv-flag-destroyed' }, 'in-place') : null,
    e.view ? h('span', { class: 'gv-flag gv-flag-view' }, 'view') : null];
}

function nodePanel(u, ctx) {
  const n = u.node, d = n.data;
  const facts = [row('kind', 'kind', n.kind), row('label', 'label', n.label)];
  if (n.op) facts.push(row('op', 'op', n.op));
  facts.push(row('id', 'id', n.scope.owner ? `${n.id} in ${n.scope.owner.label} [${n.scope.owner.key}]` : String(n.id)));
  if (d.type) facts.push(row('type', 'type', d.type));
  if (n.outputOf.length) facts.push(row('graph-output', 'graph output', n.outputOf.map(k => `#${k}`).join(', ')));
  const props = d.props && typeof d.props === 'object' ? Object.entries(d.props) : [];
  const outs = Array.isArray(d.outputs) ? d.outputs : [];
  const ins = n.ins.slice(0, MAX_LINKS).map(e => [
    h('span', { class: 'gv-idx' }, `#${e.input}`), ' ← ', link(e.from, e.from.label, ctx.goto),
    e.output ? h('span', { class: 'gv-muted' }, ` (output ${e.output})`) : null, ...edgeFlags(e)]);
  const clients = n.outs.slice(0, MAX_LINKS).map(e => [
    h('span', { class: 'gv-idx' }, `#${e.output}`), ' → ', link(e.to, e.to.label, ctx.goto),
    h('span', { class: 'gv-muted' }, ` (input ${e.input})`), ...edgeFlags(e)]);
  if (n.ins.length > MAX_LINKS) ins.push(`… ${fmtInt(n.ins.length - MAX_LINKS)} more`);
  if (n.outs.length > MAX_LINKS) clients.push(`… ${fmtInt(n.outs.length - MAX_LINKS)} more`);
  return [
    h('dl', { class: 'gv-facts' }, facts),
    props.length ? h('section', { class: 'gv-props-section', 'data-field': 'props' }, h('h4', {}, 'props'),
      h('pre', { class: 'gv-kv' }, props.map(([k, v]) => `${k}: ${propValue(v)}`).join('\n'))) : null,
    section('output types', outs.map((o, i) => [h('span', { class: 'gv-idx' }, `#${i}`), ' ',
      o && o.name ? h('b', {}, `${o.name} `) : null, (o && o.type) || '',
      o && Array.isArray(o.shape) ? h('span', { class: 'gv-muted' }, ` shape ${fmtShape(o.shape)}`) : null])),
    section('inputs', ins),
    section('outputs to', clients),
    n.inner ? h('button', { type: 'button', class: 'gv-button', 'data-test': 'inner-toggle', onclick: () => ctx.toggle(u) },
      ctx.isOpen(u) ? 'collapse inner graph' : `expand inner graph (${fmtInt(n.inner.nodes.length)} nodes)`) : null,
  ];
}

function groupPanel(u, ctx) {
  // The first MAX_LINKS nodes, depth first (without recursion: chains nest in chains).
  const members = [], stack = [u];
  while (stack.length && members.length < MAX_LINKS) {
    const x = stack.pop();
    if (x.type === 'node') members.push(x.node);
    else for (let i = x.children.length - 1; i >= 0; i--) stack.push(x.children[i]);
  }
  return [
    h('dl', { class: 'gv-facts' }, row('kind', 'kind', u.type), row('label', 'label', u.label), row('size', 'nodes', fmtInt(u.size))),
    section('members', members.map(m => link(m, m.label, ctx.goto)).concat(u.size > members.length ? [`… ${fmtInt(u.size - members.length)} more`] : [])),
    h('button', { type: 'button', class: 'gv-button', onclick: () => ctx.toggle(u) }, ctx.isOpen(u) ? 'collapse' : 'expand'),
  ];
}

/** Fills panel with unit u's properties; ctx: {goto(nodeKey), toggle(unit), isOpen(unit), close()}. */
export function renderProps(panel, u, ctx) {
  const title = u.type === 'node' ? u.node.label : u.label;
  const kind = u.type === 'node' ? u.node.kind : u.type;
  panel.setAttribute('data-test', 'node-props');
  panel.setAttribute('data-node-id', u.key);
  panel.classList.add('gv-props-open');
  replace(panel,
    h('header', { class: 'gv-props-head' },
      h('span', { class: `gv-chip gv-chip-${kind}` }, kind),
      h('h3', { title }, title),
      h('button', { type: 'button', class: 'gv-close', title: 'close', 'aria-label': 'close', onclick: ctx.close }, '×')),
    u.type === 'node' ? nodePanel(u, ctx) : groupPanel(u, ctx));
}

/** Empties the panel back to its hint. */
export function clearProps(panel) {
  panel.removeAttribute('data-test');
  panel.removeAttribute('data-node-id');
  panel.classList.remove('gv-props-open');
  replace(panel, h('p', { class: 'gv-hint' }, 'Click a node to see its properties. Drag to pan, wheel to zoom.'));
}
