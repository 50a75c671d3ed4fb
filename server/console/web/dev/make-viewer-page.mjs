// Makes a self-contained viewer page, as the Python helper will: viewer.js and viewer.css inlined,
// the graph JSON in <script id="kiln-graph" type="application/json">. Open it from file://.
//   node dev/make-viewer-page.mjs <function.json | --generate N> <out.html> [--dist DIR] [--shape blocks|chain|wide]

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateFunction } from './gen-graph.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const di = argv.indexOf('--dist');
const dist = di >= 0 ? argv.splice(di, 2)[1] : path.join(here, '..', 'dist');
const si = argv.indexOf('--shape');
const shape = si >= 0 ? argv.splice(si, 2)[1] : 'blocks';
const [source, out, count] = argv[0] === '--generate' ? [null, argv[2], Number(argv[1])] : [argv[0], argv[1]];
const f = source ? JSON.parse(await readFile(source, 'utf8')) : generateFunction(count, `generated-${shape}-${count}`, shape);
const data = { title: f.title || `function ${f.id}`, graph: f.graph, dprint: f.dprint, rewrites: f.rewrites };
// "</" must not appear inside a <script> or <style> element.
const safe = s => s.replace(/<\/(script|style)/gi, '<\\/$1');
const json = JSON.stringify(data).replace(/</g, '\\u003c');
const [js, css] = await Promise.all([readFile(path.join(dist, 'viewer.js'), 'utf8'), readFile(path.join(dist, 'viewer.css'), 'utf8')]);
await writeFile(out, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${data.title.replace(/</g, '&lt;')}</title>
<link rel="icon" href="data:,">
<style>${safe(css)}</style></head>
<body><div id="kiln-viewer"></div>
<script id="kiln-graph" type="application/json">${json}</script>
<script>${safe(js)}</script>
</body></html>
`);
console.log(`wrote ${out}`);
