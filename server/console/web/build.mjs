// Builds the console and the standalone viewer: node build.mjs [outdir] (default ./dist).
// Writes index.html, console.js, console.css, viewer.js, viewer.css into outdir.

import { build } from 'esbuild';
import { copyFile, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// Under `npm run build -- <outdir>` the working directory is this folder: resolve from where npm was run.
const base = process.env.npm_lifecycle_event === 'build' && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd();
const outdir = path.resolve(base, process.argv[2] || path.join(here, 'dist'));
const src = f => path.join(here, 'src', f);

const common = { bundle: true, minify: true, target: 'es2020', logLevel: 'warning', legalComments: 'none', absWorkingDir: here };

await mkdir(outdir, { recursive: true });
await Promise.all([
  build({ ...common, entryPoints: { console: src('console.js') }, format: 'iife', outdir }),
  build({ ...common, entryPoints: { viewer: src('viewer.js') }, format: 'iife', globalName: 'KilnViewer', outdir }),
  build({ ...common, entryPoints: { console: src('styles/console.css'), viewer: src('styles/viewer.css') }, outdir }),
  copyFile(src('index.html'), path.join(outdir, 'index.html')),
]);

const files = ['index.html', 'console.js', 'console.css', 'viewer.js', 'viewer.css'];
const sizes = await Promise.all(files.map(async f => `${f} ${((await stat(path.join(outdir, f))).size / 1024).toFixed(1)} KiB`));
console.log(`kiln console: wrote ${sizes.join(', ')} to ${outdir}`);
