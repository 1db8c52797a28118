/**
 * How an agent's state directory is kept at rest (Node only): sealed under a key from a
 * {@link SealingKeySource} (the default), or plain JSON files when the operator chose so
 * explicitly (`--insecure-plain-store`, `PARLEY_STORE=plain`). Used by the agent, the API-key
 * runtime, the plugin and the diagnostics; `docs/architecture.md` ("Keys at rest") has the model.
 */
import type { SessionStore } from '../storage.js';
import { FileSessionStore, type FileSessionStoreOptions } from './file-store.js';
import { keySourceHint, readManifest, SealedFileSessionStore } from './sealed-file-store.js';
import { KeyFileSource, PassphraseSource, SealedStoreError, type SealingKeySource } from './sealing-keys.js';

/** A state directory's store: sealed ({@link SealingKeySource}) or, only when chosen, `'plain'`. */
export type StoreProtection = 'plain' | SealingKeySource;

/** A {@link SessionStore} over a state directory's files. */
export interface StateStore extends SessionStore {
  /** The state directory (absolute). */
  readonly dir: string;
  /** The file that holds `id`. */
  fileFor(id: string): string;
}

/**
 * Open the store of `dir` as `protection` says.
 * @throws SealedStoreError `sealed_store` when `'plain'` is asked for a sealed directory; the
 *   errors of {@link SealedFileSessionStore.open}.
 */
export async function openStateStore(dir: string, protection: StoreProtection, options: FileSessionStoreOptions = {}): Promise<StateStore> {
  if (protection !== 'plain') return SealedFileSessionStore.open(dir, protection, options);
  const store = new FileSessionStore(dir, options);
  const manifest = await readManifest(store.dir);
  if (manifest) throw new SealedStoreError('sealed_store', `${store.dir} is sealed with a ${manifest.key_source}; ${keySourceHint(manifest.key_source)} (plain storage was chosen)`);
  return store;
}

/** The operator's choice, from command-line flags (which win) and the environment. */
export interface StoreChoice {
  /** `--key-file PATH`. */
  keyFile?: string;
  /** `--insecure-plain-store`. */
  plain?: boolean;
  /** Default `process.env`: `PARLEY_KEY_FILE`, `PARLEY_PASSPHRASE`, `PARLEY_STORE` (`plain` or `sealed`). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The {@link StoreProtection} the operator chose: a key file (`--key-file`, else
 * `PARLEY_KEY_FILE`), a passphrase (`PARLEY_PASSPHRASE`), or plain storage (`--insecure-plain-store`
 * or `PARLEY_STORE=plain`). Flags win over the environment.
 * @throws SealedStoreError `no_key` when nothing was chosen, or plain storage and a key were
 *   both chosen, or both a key file and a passphrase.
 */
export function chooseStoreProtection(choice: StoreChoice = {}): StoreProtection {
  const env = choice.env ?? process.env;
  const store = env.PARLEY_STORE?.trim().toLowerCase();
  if (store !== undefined && store !== '' && store !== 'plain' && store !== 'sealed') throw new SealedStoreError('no_key', `PARLEY_STORE must be "plain" or "sealed", not ${JSON.stringify(env.PARLEY_STORE)}`);
  const fromFlags = choice.keyFile !== undefined || choice.plain === true;
  const keyFile = fromFlags ? choice.keyFile : env.PARLEY_KEY_FILE || undefined;
  const passphrase = fromFlags ? undefined : env.PARLEY_PASSPHRASE || undefined;
  const plain = fromFlags ? choice.plain === true : store === 'plain';
  const chosen = [keyFile !== undefined, passphrase !== undefined, plain].filter(Boolean).length;
  if (chosen > 1) throw new SealedStoreError('no_key', 'choose one of a key file (--key-file, PARLEY_KEY_FILE), a passphrase (PARLEY_PASSPHRASE) and plain storage (--insecure-plain-store, PARLEY_STORE=plain)');
  if (plain) return 'plain';
  if (keyFile !== undefined) return new KeyFileSource(keyFile);
  if (passphrase !== undefined) return new PassphraseSource(passphrase);
  throw new SealedStoreError(
    'no_key',
    'the agent seals its state directory (keys, sessions, undelivered messages) at rest and needs a key: --key-file PATH or PARLEY_KEY_FILE (created with 32 random bytes when missing), or PARLEY_PASSPHRASE; --insecure-plain-store (PARLEY_STORE=plain) keeps plain files instead',
  );
}

/** Store options shared by the agent, the API-key runtime and the plugin. */
export interface StateStoreOptions {
  /** How the state directory is kept at rest (default: {@link chooseStoreProtection} from the environment). */
  protection?: StoreProtection;
  /** fsync state files (default true). */
  fsync?: boolean;
}

/**
 * Open the store of an agent's state directory with `options` (see {@link StateStoreOptions}).
 * @throws SealedStoreError (no key chosen, wrong key, sealed with another source, …).
 */
export function openAgentStore(stateDir: string, options: StateStoreOptions): Promise<StateStore> {
  return openStateStore(stateDir, options.protection ?? chooseStoreProtection(), { fsync: options.fsync ?? true });
}
