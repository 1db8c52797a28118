/**
 * Build step (issue 14 item 5, cold start): bundle the service's entry point, `dist/main.js` as
 * tsc wrote it, with everything it imports into one ES module written over it, so `npm start`
 * loads one file instead of some 1,200 (module resolution and loading was the largest part of
 * the service's start-up time). `node dist/build/bundle.js` runs after tsc (package.json
 * `build`); without it `dist/main.js` is tsc's own and works the same, only slower to start.
 *
 * Kept outside the bundle (loaded from node_modules as usual): packages that find their own files
 * next to their code (`__dirname`, `import.meta.url`: PGlite's WebAssembly, the Swagger UI's
 * assets, the credentials contexts, package.json versions, pino's worker). The build fails when
 * another bundled package does that, rather than producing a service that breaks at run time.
 * The service's own `import.meta.url` (migrations folder, PGlite seed, web app folder) is
 * rewritten to each module's tsc location, so relative paths resolve as they do unbundled.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const DIST = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = path.join(DIST, 'main.js');

/** Packages loaded from node_modules at run time, not bundled (see the header). */
export const EXTERNAL = [
  '@electric-sql/pglite',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  '@digitalbazaar/credentials-context',
  'ioredis',
  'pino',
  'thread-stream',
];

/** Source that locates files relative to its own module, which bundling would break. */
const SELF_LOCATING = /\b__dirname\b|\b__filename\b|\bimport\.meta\.url\b|\bimport\.meta\.dirname\b/;

/** Rewrites `import.meta.url` in the service's own modules (tsc output under `dist`, and the protocol package's) to their unbundled URL. */
function ownModuleUrls(outfile: string): esbuild.Plugin {
  return {
    name: 'own-module-urls',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = await fs.promises.readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const relative = path.relative(path.dirname(outfile), args.path).split(path.sep).join('/');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(`./${relative}`)}, import.meta.url).href`), loader: 'js' };
      });
    },
  };
}

/** Bundle `entry` into `outfile` (default: over `dist/main.js`). @throws when a bundled package locates its own files. */
export async function bundle(entry: string = ENTRY, outfile: string = ENTRY): Promise<{ inputs: number; bytes: number }> {
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // Bundled CommonJS packages call require() for Node's modules and optional packages.
    banner: { js: "import { createRequire as __parleyCreateRequire } from 'node:module';\nconst require = __parleyCreateRequire(import.meta.url);" },
    plugins: [ownModuleUrls(outfile)],
    metafile: true,
    logLevel: 'error',
    legalComments: 'none',
  });
  const selfLocating = Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules/') && SELF_LOCATING.test(fs.readFileSync(input, 'utf8')));
  if (selfLocating.length > 0) {
    throw new Error(`these bundled files locate their own files (add their packages to EXTERNAL in src/build/bundle.ts):\n${selfLocating.join('\n')}`);
  }
  return { inputs: Object.keys(result.metafile.inputs).length, bytes: fs.statSync(outfile).size };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { inputs, bytes } = await bundle();
  console.log(`bundled ${inputs} modules into ${path.relative(process.cwd(), ENTRY)} (${(bytes / 1e6).toFixed(1)} MB)`);
}
