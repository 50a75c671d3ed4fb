// Number, size, time and type formatting shared by the views.

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** Unix seconds -> "2024-05-01 13:04:05" in local time ("" when missing). */
export function fmtTime(t) {
  if (t === null || t === undefined || !isFinite(t) || t <= 0) return '';
  const d = new Date(t * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Seconds -> "3 d 4 h", "2 h 5 min", "4 min 12 s", "12.5 s". */
export function fmtDuration(sec) {
  if (sec === null || sec === undefined || !isFinite(sec)) return '';
  if (sec < 60) return `${+sec.toFixed(1)} s`;
  const m = Math.floor(sec / 60), hr = Math.floor(m / 60), d = Math.floor(hr / 24);
  if (d) return `${d} d ${hr % 24} h`;
  if (hr) return `${hr} h ${m % 60} min`;
  return `${m} min ${Math.floor(sec % 60)} s`;
}

/** Bytes -> "1.5 MiB" (binary units, 3 significant digits). */
export function fmtBytes(b) {
  if (b === null || b === undefined || !isFinite(b)) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, v = Math.abs(b);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  const sign = b < 0 ? '-' : '';
  return i === 0 ? `${sign}${v} B` : `${sign}${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[i]}`;
}

/** A count with thousands separators ("" when missing). */
export function fmtInt(n) {
  return n === null || n === undefined || !isFinite(n) ? '' : Math.round(n).toLocaleString('en-US');
}

/** A float with at most `digits` decimals, trailing zeros dropped ("" when missing). */
export function fmtNum(x, digits = 2) {
  return x === null || x === undefined || !isFinite(x) ? '' : String(+x.toFixed(digits));
}

/** "TensorType(float64, (?, 3))" -> "float64 (?, 3)"; other type strings unchanged. */
export function shortType(t) {
  if (typeof t !== 'string') return '';
  const m = /^TensorType\((\w+),\s*(.*)\)$/.exec(t);
  return m ? `${m[1]} ${m[2]}` : t;
}

/** A static shape list ([2, null]) -> "(2, ?)". */
export function fmtShape(shape) {
  if (!Array.isArray(shape)) return '';
  return `(${shape.map(d => (d === null || d === undefined ? '?' : d)).join(', ')}${shape.length === 1 ? ',' : ''})`;
}

/** A long id -> its first 12 characters with an ellipsis. */
export function shortId(id, n = 12) {
  return id && id.length > n + 1 ? `${id.slice(0, n)}…` : id || '';
}
