/**
 * Build step (cold start): bundle the service's entry point, `dist/main.js` as
 * tsc wrote it, with everything it imports into a few ES modules under `dist/start`, and make
 * `dist/main.js` load them, so `npm start` loads a handful of files instead of some 1,200 (module
 * resolution and loading was the largest part of the service's start-up time). `node
 * dist/build/bundle.js` runs after tsc (package.json `build`); without it `dist/main.js` is
 * tsc's own and works the same, only slower to start.
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
/** Where the bundle's files go; `dist/main.js` becomes a one-line loader of `start/main.js`. */
const OUT_DIR = path.join(DIST, 'start');

/** Packages loaded from node_modules at run time, not bundled (see the header). */
export const EXTERNAL = [
  '@electric-sql/pglite',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  '@digitalbazaar/credentials-context',
  // ws's optional native frame masking (loads its prebuilt addon relative to itself).
  'bufferutil',
  'ioredis',
  'pino',
  'thread-stream',
];

/** Source that locates files relative to its own module, which bundling would break. */
const SELF_LOCATING = /\b__dirname\b|\b__filename\b|\bimport\.meta\.url\b|\bimport\.meta\.dirname\b/;

/** Rewrites `import.meta.url` in the service's own modules (tsc output under `dist`, and the protocol package's) to their unbundled URL. */
function ownModuleUrls(outdir: string): esbuild.Plugin {
  return {
    name: 'own-module-urls',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = await fs.promises.readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const relative = path.relative(outdir, args.path).split(path.sep).join('/');
        return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(`./${relative}`)}, import.meta.url).href`), loader: 'js' };
      });
    },
  };
}

/**
 * Bundle `entry` (default: tsc's `dist/main.js`) into `outdir` (default `dist/start`): the entry
 * chunk holds what runs before the app is imported (config, the PGlite seed), the app and its
 * dependencies come in chunks the entry's dynamic `import('./app.js')` loads, so the seed is
 * being unpacked while they load. `dist/main.js` is then replaced by a loader of the entry chunk.
 * @throws when a bundled package locates its own files.
 */
export async function bundle(entry: string = ENTRY, outdir: string = OUT_DIR): Promise<{ inputs: number; bytes: number }> {
  if (fs.readFileSync(entry, 'utf8').includes('bundled by src/build/bundle.ts')) throw new Error(`${entry} is already the bundle's loader: run tsc first`);
  fs.rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { main: entry },
    outdir,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // Bundled CommonJS packages call require() for Node's modules and optional packages.
    banner: { js: "import { createRequire as __parleyCreateRequire } from 'node:module';\nconst require = __parleyCreateRequire(import.meta.url);" },
    plugins: [ownModuleUrls(outdir)],
    metafile: true,
    logLevel: 'error',
    legalComments: 'none',
  });
  const selfLocating = Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules/') && fs.existsSync(input) && SELF_LOCATING.test(fs.readFileSync(input, 'utf8')));
  if (selfLocating.length > 0) {
    throw new Error(`these bundled files locate their own files (add their packages to EXTERNAL in src/build/bundle.ts):\n${selfLocating.join('\n')}`);
  }
  if (entry === ENTRY) {
    const loader = path.relative(DIST, path.join(outdir, 'main.js')).split(path.sep).join('/');
    fs.writeFileSync(ENTRY, `// The service, bundled by src/build/bundle.ts at build time (tsc's own main.js is bundled there).\nimport './${loader}';\n`);
  }
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  return { inputs: Object.keys(result.metafile.inputs).length, bytes };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { inputs, bytes } = await bundle();
  console.log(`bundled ${inputs} modules into ${path.relative(process.cwd(), OUT_DIR)} (${(bytes / 1e6).toFixed(1)} MB); ${path.relative(process.cwd(), ENTRY)} loads it`);
}
