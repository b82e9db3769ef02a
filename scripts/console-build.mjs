// @ts-check
/**
 * Bundles the web console's page (src/http/console/ui: Preact, htm, uPlot and
 * the stylesheet) with esbuild into one minified script and one stylesheet
 * under content-hashed names, plus manifest.json naming them, in dist/console
 * (or the folder given). `npm run build` runs it after compiling; tests call
 * {@link buildConsole} themselves. Nothing is fetched at run time: no CDN.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Builds the bundle into `outDir` (emptied first) and returns the manifest.
 * @param {string} [outDir]
 * @returns {Promise<{ script: string, css: string }>}
 */
export async function buildConsole(outDir = join(ROOT, 'dist', 'console')) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(ROOT, 'src', 'http', 'console', 'ui', 'app.js')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    outdir: outDir,
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = outputs.find((name) => name.endsWith('.js'));
  const css = outputs.find((name) => name.endsWith('.css'));
  if (!script || !css) throw new Error('the console bundle lacks its script or stylesheet');
  const manifest = { script, css };
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildConsole(process.argv[2]).then(
    (manifest) => console.error(`console bundle: ${manifest.script}, ${manifest.css}`),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
