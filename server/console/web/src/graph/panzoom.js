// Pan (drag) and zoom (wheel) of an SVG viewport group; tells clicks apart from drags.

const MIN_K = 0.02, MAX_K = 4;

/** Makes svg pannable/zoomable by transforming viewport; onClick(target, event) gets clicks that were not drags. */
export function panZoom(svg, viewport, onClick) {
  let k = 1, tx = 0, ty = 0, drag = null;
  const apply = () => viewport.setAttribute('transform', `translate(${tx.toFixed(1)},${ty.toFixed(1)}) scale(${k.toFixed(4)})`);
  const local = ev => {
    const r = svg.getBoundingClientRect();
    return { x: ev.clientX - r.left, y: ev.clientY - r.top };
  };
  const zoomAt = (p, factor) => {
    const nk = Math.min(MAX_K, Math.max(MIN_K, k * factor));
    tx = p.x - ((p.x - tx) * nk) / k;
    ty = p.y - ((p.y - ty) * nk) / k;
    k = nk;
    apply();
  };
  const onWheel = ev => {
    ev.preventDefault();
    const dy = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
    zoomAt(local(ev), Math.exp(-dy * 0.0015));
  };
  const onDown = ev => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx, ty, moved: false, target: ev.target };
    window.addEventListener('pointermove', onMove);
    window.addEventListener('pointerup', onUp);
  };
  const onMove = ev => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    svg.classList.add('gv-panning');
    tx = drag.tx + dx;
    ty = drag.ty + dy;
    apply();
  };
  const onUp = ev => {
    window.removeEventListener('pointermove', onMove);
    window.removeEventListener('pointerup', onUp);
    svg.classList.remove('gv-panning');
    const d = drag;
    drag = null;
    if (d && !d.moved) onClick(d.target, ev);
  };
  svg.addEventListener('wheel', onWheel, { passive: false });
  svg.addEventListener('pointerdown', onDown);
  apply();
  return {
    /** The scale at which the box {x, y, width, height} fills the view (0 if the view has no size). */
    fitScale(box, maxK = 1.2) {
      const r = svg.getBoundingClientRect();
      if (!box.width || !box.height || !r.width || !r.height) return 0;
      return Math.max(MIN_K, Math.min(maxK, (0.94 * r.width) / box.width, (0.94 * r.height) / box.height));
    },
    /** Scales and centres so the box {x, y, width, height} (top-left based) fills the view. */
    fit(box, maxK = 1.2) {
      const r = svg.getBoundingClientRect();
      const fk = this.fitScale(box, maxK);
      if (!fk) return;
      k = fk;
      tx = r.width / 2 - (box.x + box.width / 2) * k;
      ty = r.height / 2 - (box.y + box.height / 2) * k;
      apply();
    },
    /** Centres the view on a point of the graph, zooming in to at least minK. */
    centre(x, y, minK = 0.8) {
      const r = svg.getBoundingClientRect();
      k = Math.max(k, minK);
      tx = r.width / 2 - x * k;
      ty = r.height / 2 - y * k;
      apply();
    },
    /** Moves the view so that graph point (x, y) shows at screen point (sx, sy), at scale newK if given. */
    pin(x, y, sx, sy, newK) {
      if (newK) k = Math.min(MAX_K, Math.max(MIN_K, newK));
      tx = sx - x * k;
      ty = sy - y * k;
      apply();
    },
    /** The current scale. */
    scale() {
      return k;
    },
    /** Size of the view in pixels. */
    size() {
      const r = svg.getBoundingClientRect();
      return { width: r.width, height: r.height };
    },
    /** Screen position (in the svg) of graph point (x, y). */
    toScreen(x, y) {
      return { x: x * k + tx, y: y * k + ty };
    },
    /** Zooms by a factor around the view's centre. */
    zoom(factor) {
      const r = svg.getBoundingClientRect();
      zoomAt({ x: r.width / 2, y: r.height / 2 }, factor);
    },
    /** Removes the listeners. */
    destroy() {
      drag = null;
      svg.removeEventListener('wheel', onWheel);
      svg.removeEventListener('pointerdown', onDown);
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', onUp);
    },
  };
}
