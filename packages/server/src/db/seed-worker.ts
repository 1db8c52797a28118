/**
 * Worker thread of `startCreateFromSeed` (db/pglite-seed.ts): unpacks the PGlite seed into a new
 * data directory off the main thread while the service loads, and posts whether it made it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { unpackSeedHere } from './pglite-seed.js';

const { dataDir, file } = workerData as { dataDir: string; file: string };
parentPort!.postMessage(await unpackSeedHere(dataDir, file, true));
