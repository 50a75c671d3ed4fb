// What a box shows (title, subtitle, kind) and its size, measured with a canvas.

import { fmtInt, shortType } from '../util/format.js';

const FONT_MAIN = '600 12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const FONT_SUB = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const MAX_CHARS = 42;
const PAD_X = 14;
const BADGE_ROOM = 14;

let ctx = null;
const widths = new Map();

/** Width in pixels of text in the given CSS font (cached). */
export function textWidth(text, font) {
  const k = `${font}|${text}`;
  let w = widths.get(k);
  if (w === undefined) {
    if (!ctx) ctx = document.createElement('canvas').getContext('2d');
    if (ctx) { ctx.font = font; w = ctx.measureText(text).width; } else w = text.length * 7;
    widths.set(k, w);
  }
  return w;
}

/** Cuts text to n characters with an ellipsis. */
export function clip(text, n = MAX_CHARS) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function firstType(node) {
  const d = node.data;
  if (d.type) return shortType(d.type);
  const outs = d.outputs || [];
  if (!outs.length) return '';
  const t = shortType(outs[0] && outs[0].type);
  return outs.length > 1 ? `${t} (+${outs.length - 1})` : t;
}

/** The kind ('input', 'constant', 'apply', 'chain', 'group') and texts of a unit's box. */
export function boxContent(u) {
  if (u.type === 'chain') return { kind: 'chain', title: u.label, sub: u.sub || '', expandable: true, output: !!u.output };
  if (u.type === 'group') return { kind: 'group', title: u.label, sub: `${fmtInt(u.size)} nodes`, expandable: true, output: !!u.output };
  const n = u.node;
  const kind = ['input', 'constant'].includes(n.kind) ? n.kind : 'apply';
  return { kind, title: n.label, sub: firstType(n), expandable: u.children.length > 0, output: n.outputOf.length > 0 };
}

/** The box's size {width, height}, kept on the unit. */
export function boxSize(u) {
  if (!u._box) {
    const c = boxContent(u);
    const w = Math.max(textWidth(clip(c.title), FONT_MAIN), c.sub ? textWidth(clip(c.sub), FONT_SUB) : 0);
    u._box = { width: Math.ceil(Math.max(56, w + 2 * PAD_X + (c.expandable ? BADGE_ROOM : 0))), height: c.sub ? 40 : 28 };
  }
  return u._box;
}
