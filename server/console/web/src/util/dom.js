// Tiny DOM builders: h() for HTML elements, s() for SVG elements.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'value' || k === 'checked') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

/** Appends children (strings, nodes, nested arrays; null/false skipped) to el. */
export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Creates an HTML element: h('div', {class: 'x', onclick: f}, 'text', child). */
export function h(tag, attrs, ...children) {
  return apply(document.createElement(tag), attrs, children);
}

/** Creates an SVG element, same signature as h(). */
export function s(tag, attrs, ...children) {
  return apply(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replaces all children of el. */
export function replace(el, ...children) {
  el.textContent = '';
  return append(el, children);
}
