// The dashboard's files, read once when the admin table is built: the page's own modules (static/),
// the module it shares with the gateway (src/core/visible-text.js), and the browser libraries from
// the package's own dependencies (preact, htm, uPlot), found by module resolution so no CDN and no
// build step is involved. A missing file fails the start.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** Where the page loads its files from (the page refers to them relatively, as ./ui/…). */
export const ASSET_PREFIX = '/admin/ui/';

/** Browser import specifier → the file under ASSET_PREFIX it maps to. */
const VENDOR: Readonly<Record<string, { readonly specifier: string; readonly file: string }>> = {
  preact: { specifier: 'preact', file: 'vendor/preact.mjs' },
  'preact/hooks': { specifier: 'preact/hooks', file: 'vendor/preact-hooks.mjs' },
  htm: { specifier: 'htm', file: 'vendor/htm.mjs' },
  uplot: { specifier: 'uplot/dist/uPlot.esm.js', file: 'vendor/uplot.mjs' },
};
const UPLOT_CSS: { readonly specifier: string; readonly file: string } = {
  specifier: 'uplot/dist/uPlot.min.css',
  file: 'vendor/uplot.css',
};
/** Modules the page shares with the rest of the gateway (plain JavaScript, served as they are). */
const SHARED: readonly { readonly url: URL; readonly file: string }[] = [
  { url: new URL('../../core/visible-text.js', import.meta.url), file: 'visible-text.js' },
];

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface DashboardAssets {
  /** The page itself (GET /admin/). */
  readonly page: Asset;
  /** File name under ASSET_PREFIX → its contents. */
  readonly files: ReadonlyMap<string, Asset>;
  /** The Content-Security-Policy every dashboard answer carries (the import map allowed by hash). */
  readonly csp: string;
}

/** Where each file served under ASSET_PREFIX is read from (names only: nothing is read yet). */
export function dashboardAssetPaths(): ReadonlyMap<string, string> {
  const paths = new Map<string, string>();
  const staticDir = new URL('./static/', import.meta.url);
  for (const name of readdirSync(staticDir)) {
    if (name !== 'index.html') paths.set(name, fileURLToPath(new URL(name, staticDir)));
  }
  for (const { specifier, file } of [...Object.values(VENDOR), UPLOT_CSS])
    paths.set(file, fileURLToPath(import.meta.resolve(specifier)));
  for (const { url, file } of SHARED) paths.set(file, fileURLToPath(url));
  return paths;
}

/** Reads every file of the page (~270 KB); the routes call it on the first dashboard request, not at start. */
export function loadDashboardAssets(paths: ReadonlyMap<string, string> = dashboardAssetPaths()): DashboardAssets {
  const files = new Map<string, Asset>();
  const staticDir = new URL('./static/', import.meta.url);
  for (const [file, path] of paths) files.set(file, asset(path, file));
  const importMap = JSON.stringify({
    imports: Object.fromEntries(Object.entries(VENDOR).map(([name, v]) => [name, `./ui/${v.file}`])),
  });
  const hash = createHash('sha256').update(importMap).digest('base64');
  const html = readFileSync(new URL('index.html', staticDir), 'utf8').replace(
    '<!--IMPORT_MAP-->',
    `<script type="importmap">${importMap}</script>`,
  );
  return {
    page: { body: Buffer.from(html), contentType: TYPES['.html'] ?? 'text/html' },
    files,
    csp: [
      "default-src 'none'",
      `script-src 'self' 'sha256-${hash}'`,
      // uPlot sizes its canvas and legend with style attributes.
      "style-src 'self' 'unsafe-inline'",
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
}

function asset(path: string, servedAs = path): Asset {
  const ext = /\.[a-z]+$/.exec(servedAs)?.[0] ?? '';
  return { body: readFileSync(path), contentType: TYPES[ext] ?? 'application/octet-stream' };
}
