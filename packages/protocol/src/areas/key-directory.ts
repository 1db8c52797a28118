/**
 * Key transparency (design §8.39): the verifiable key directory in which the service commits every
 * key it serves for session set-up or peer verification before serving it (`key-directory/*` has
 * the structures). A client looks up the label of a key it was served and checks, before it first
 * trusts the key and whenever it changes: the checkpoint's signature (the platform log key, and
 * the witness cosignatures its tenant requires), the checkpoint's consistency with the last one it
 * accepted, the newest log entry's inclusion, the label's VRF proof, the prefix-tree path to that
 * entry's prefix root and the commitment to the value it holds. A device checks its own labels the
 * same way and reports a key it did not publish.
 */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../contract.js';
import { Base64, lit, Nullable, Uuid } from '../common.js';
import { AuditLogKeyInfo } from './audit.js';

/** A tree hash (SHA-256) in standard base64. */
const Hash = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'SHA-256, base64' });
const TreeSize = Type.Integer({ minimum: 0 });
/** A label (key-directory/labels.ts): 1-300 printable characters. */
const Label = Type.String({ minLength: 1, maxLength: 300, pattern: '^[\\x21-\\x7e]+$', description: 'a key directory label, e.g. device/<id>' });

/** The most witness cosignatures a tenant may ask for. */
export const KEY_DIRECTORY_MAX_WITNESSES = 10;

/**
 * `GET /api/v1/key-directory` answer: what a client pins on first use (or is configured with): the
 * checkpoints' origin and the keys that sign them (the platform log key, as `GET /audit/log-key`),
 * the VRF suite and public key, and the witness policy of the caller's tenant (the witnesses'
 * C2SP vkeys and how many of their cosignatures a checkpoint needs).
 */
export const KeyDirectoryInfo = Type.Object({
  /** `<host>/keys`, the first line of every checkpoint. */
  origin: Type.String(),
  log_keys: Type.Array(AuditLogKeyInfo),
  vrf_suite: Type.Literal('ECVRF-EDWARDS25519-SHA512-TAI'),
  /** The VRF public key, 64 hex characters. */
  vrf_public_key: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  witnesses: Type.Array(Type.String(), { description: 'C2SP tlog-cosignature vkeys of the witnesses the tenant trusts' }),
  min_cosignatures: Type.Integer({ minimum: 0, maximum: KEY_DIRECTORY_MAX_WITNESSES }),
});
export type KeyDirectoryInfo = Static<typeof KeyDirectoryInfo>;

/**
 * A signed checkpoint of the directory's log: `checkpoint` is the whole C2SP signed note (origin,
 * tree size, root hash; then the platform key's signature and the witness cosignatures held for
 * that size). Verifiers read size and root from the note, never from the fields beside it.
 */
export const KeyDirectoryCheckpoint = Type.Object({ tree_size: TreeSize, root_hash: Hash, checkpoint: Type.String() });
export type KeyDirectoryCheckpoint = Static<typeof KeyDirectoryCheckpoint>;

/** `since`: the tree size of the last checkpoint the client accepted (0 or absent: none). */
const Since = Type.Optional(Type.Integer({ minimum: 0, description: 'the tree size of the last checkpoint the caller accepted' }));

/** `GET /api/v1/key-directory/checkpoint` query. */
export const KeyDirectoryCheckpointQuery = Type.Object({ since: Since });
export type KeyDirectoryCheckpointQuery = Static<typeof KeyDirectoryCheckpointQuery>;

/** `GET /api/v1/key-directory/checkpoint` answer: the newest checkpoint and the RFC 9162 consistency proof from `since` (empty without one). */
export const KeyDirectoryHead = Type.Object({ checkpoint: KeyDirectoryCheckpoint, consistency: Type.Array(Hash) });
export type KeyDirectoryHead = Static<typeof KeyDirectoryHead>;

/** `GET /api/v1/key-directory/lookup` query: the label and the caller's last accepted size. */
export const KeyLookupQuery = Type.Object({ label: Label, since: Since });
export type KeyLookupQuery = Static<typeof KeyLookupQuery>;

/** One label's part of a lookup answer: its version, commitment opening, VRF proof and prefix-tree path. */
export const KeyLabelProof = Type.Object({
  label: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  opening: Hash,
  vrf_proof: Type.String({ ...Base64, minLength: 108, maxLength: 108, description: '80 bytes, base64' }),
  prefix_path: Type.Array(Hash),
});
export type KeyLabelProof = Static<typeof KeyLabelProof>;

/** The newest log entry of a lookup answer: leaf index (tree size - 1), the 104 entry bytes, its RFC 9162 audit path. */
const HeadEntry = Type.Object({ leaf_index: Type.Integer({ minimum: 0 }), entry: Type.String({ ...Base64, description: '104 bytes, base64' }), audit_path: Type.Array(Hash) });

/**
 * `GET /api/v1/key-directory/lookup` answer: the proof that the label's current value (which the
 * caller already holds; it is never in the answer) is committed in the checkpoint: its `version`
 * and commitment `opening`, the VRF proof of its index (80 bytes), the prefix-tree path from its
 * leaf to the newest entry's prefix root (siblings deepest first), that entry (`head`: leaf index
 * = tree size - 1, the 104 entry bytes, its RFC 9162 audit path), the checkpoint, and the
 * consistency proof from `since`.
 */
export const KeyLookup = Type.Object({ ...KeyLabelProof.properties, head: HeadEntry, checkpoint: KeyDirectoryCheckpoint, consistency: Type.Array(Hash) });
export type KeyLookup = Static<typeof KeyLookup>;

/** Most labels in one `POST /api/v1/key-directory/lookups`. */
export const KEY_DIRECTORY_MAX_LOOKUPS = 16;

/** `POST /api/v1/key-directory/lookups` body: the labels (distinct) and the caller's last accepted size. */
export const KeyLookupsRequest = Type.Object(
  { labels: Type.Array(Label, { minItems: 1, maxItems: KEY_DIRECTORY_MAX_LOOKUPS, uniqueItems: true }), since: Since },
  { additionalProperties: false },
);
export type KeyLookupsRequest = Static<typeof KeyLookupsRequest>;


/**
 * `POST /api/v1/key-directory/lookups` answer: {@link KeyLookup}'s proof for several labels against
 * one checkpoint (one newest entry, one consistency proof), `proofs` in the order asked.
 */
export const KeyLookups = Type.Object({
  proofs: Type.Array(KeyLabelProof),
  head: HeadEntry,
  checkpoint: KeyDirectoryCheckpoint,
  consistency: Type.Array(Hash),
});
export type KeyLookups = Static<typeof KeyLookups>;

/** Most entries in one `GET /api/v1/key-directory/entries` answer. */
export const KEY_DIRECTORY_MAX_ENTRIES = 1000;

/** `GET /api/v1/key-directory/entries` query: the first leaf index and how many (default and at most 1000). */
export const KeyDirectoryEntriesQuery = Type.Object({
  start: Type.Integer({ minimum: 0, description: 'the first leaf index (entry seq - 1)' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: KEY_DIRECTORY_MAX_ENTRIES, default: KEY_DIRECTORY_MAX_ENTRIES })),
});
export type KeyDirectoryEntriesQuery = Static<typeof KeyDirectoryEntriesQuery>;

/**
 * `GET /api/v1/key-directory/entries` answer: the log entries from leaf `start` (each the 104
 * bytes index || version || commitment || prefix root, base64), for auditors who replay the
 * directory: each entry's prefix root must follow from the one before and the entry's update, and
 * the entries must hash to the checkpoints' roots. No labels, no values, no openings.
 */
export const KeyDirectoryEntries = Type.Object({ start: Type.Integer({ minimum: 0 }), entries: Type.Array(Type.String()), tree_size: TreeSize });
export type KeyDirectoryEntries = Static<typeof KeyDirectoryEntries>;

/** Why a client reports a key: its proof failed, or the directory holds a key of its own it did not publish. */
export const KEY_DIRECTORY_REPORT_REASONS = ['verification_failed', 'unpublished_key'] as const;
export type KeyDirectoryReportReason = (typeof KEY_DIRECTORY_REPORT_REASONS)[number];

/** `POST /api/v1/key-directory/reports` body: the label, why, and what the client saw (no key material needed). */
export const KeyDirectoryReportRequest = Type.Object(
  { label: Label, reason: lit(KEY_DIRECTORY_REPORT_REASONS), detail: Type.String({ minLength: 1, maxLength: 500 }) },
  { additionalProperties: false },
);
export type KeyDirectoryReportRequest = Static<typeof KeyDirectoryReportRequest>;

/** `key_directory_alert` socket event (to the owner devices of the reporting device's tenant; also pushed): what a device reported. */
export const KeyDirectoryAlertEvent = Type.Object({
  label: Type.String(),
  reason: lit(KEY_DIRECTORY_REPORT_REASONS),
  detail: Type.String(),
  /** The device that reported it (null for an owner session that named none). */
  device_id: Nullable(Uuid),
  reported_at: Type.String({ format: 'date-time' }),
});
export type KeyDirectoryAlertEvent = Static<typeof KeyDirectoryAlertEvent>;

/** `POST /api/v1/key-directory/reports` answer: the report was recorded in the audit log and sent to the owners. */
export const KeyDirectoryReportAccepted = Type.Object({ accepted: Type.Literal(true) });
export type KeyDirectoryReportAccepted = Static<typeof KeyDirectoryReportAccepted>;

const tags = ['key-directory'];

/** Route rows of this area. */
export const keyDirectoryRoutes = {
  keyDirectoryInfo: defineRoute({
    method: 'GET',
    path: '/api/v1/key-directory',
    auth: 'any',
    tags,
    summary: 'What a client pins to verify the key directory: origin, log keys, VRF key and the tenant\'s witness policy',
    description:
      'The key directory\'s checkpoint origin, the platform keys that sign its checkpoints, the VRF suite and public key that hide its labels, and the witness cosignatures the caller\'s tenant requires before its clients accept a checkpoint. Clients pin this on first use (or are configured with it) and refuse a directory that later answers other keys.',
    responses: { 200: KeyDirectoryInfo },
    errors: [401, 403],
  }),
  keyDirectoryCheckpoint: defineRoute({
    method: 'GET',
    path: '/api/v1/key-directory/checkpoint',
    auth: 'public',
    tags,
    summary: 'The newest signed checkpoint of the key directory, with a consistency proof from an earlier size',
    description:
      'The newest checkpoint of the key directory\'s log as a C2SP signed note carrying the witness cosignatures held for it, and the RFC 9162 consistency proof from the tree size `since` (the caller\'s last accepted checkpoint). Monitors and witnesses read it without credentials. 400 when `since` is larger than the tree.',
    query: KeyDirectoryCheckpointQuery,
    responses: { 200: KeyDirectoryHead },
    errors: [400],
  }),
  keyDirectoryEntries: defineRoute({
    method: 'GET',
    path: '/api/v1/key-directory/entries',
    auth: 'public',
    tags,
    summary: 'The key directory\'s log entries, for auditors who replay it',
    description:
      'Up to `limit` (1000) log entries of the key directory from leaf index `start`, each the 104-byte entry (VRF index, version, commitment, prefix root after the update) in base64, with the current tree size. An auditor replays them to check that each prefix root follows from the previous one and that the log hashes to the signed checkpoints. They hold no labels, values or openings. 400 when `start` is beyond the tree.',
    query: KeyDirectoryEntriesQuery,
    responses: { 200: KeyDirectoryEntries },
    errors: [400],
  }),
  keyDirectoryLookup: defineRoute({
    method: 'GET',
    path: '/api/v1/key-directory/lookup',
    auth: 'any',
    tags,
    summary: 'The proof that a key the caller was served is the current one for its label in the newest checkpoint',
    description:
      'Answers the proof that the current value of `label` is committed in the newest checkpoint: version, commitment opening, VRF proof, prefix-tree path, the newest log entry with its audit path, the checkpoint and the consistency proof from `since`. The value itself is not answered: the caller checks the proof against the key it was served. Labels of other tenants\' devices can be looked up (an A2A peer, a rental room member), and the answer reveals nothing about any other label. 400 when `since` is larger than the tree. 404 when the directory holds no such label.',
    query: KeyLookupQuery,
    responses: { 200: KeyLookup },
    errors: [400, 401, 403, 404],
  }),
  keyDirectoryLookups: defineRoute({
    method: 'POST',
    path: '/api/v1/key-directory/lookups',
    auth: 'any',
    tags,
    summary: 'The proofs that several keys the caller was served are current, against one checkpoint',
    description:
      'What `GET /key-directory/lookup` answers, for up to 16 labels at once against one checkpoint (one newest entry, one consistency proof from `since`), so a session set-up checks a device\'s keys and prekeys in one round trip. The values are not answered. 400 for more than 16 labels, repeated labels, or `since` larger than the tree. 404 when the directory holds no entry for one of the labels (the detail names it).',
    body: KeyLookupsRequest,
    responses: { 200: KeyLookups },
    errors: [400, 401, 403, 404],
  }),
  reportKeyDirectory: defineRoute({
    method: 'POST',
    path: '/api/v1/key-directory/reports',
    auth: 'any',
    tags,
    summary: 'Report a key that failed key-transparency verification, or a key of the caller\'s own it did not publish',
    description:
      'A client reports that a key failed its key-transparency check (`verification_failed`; it refused the session) or that the directory holds a key of its own that it did not publish (`unpublished_key`). The report is written to the tenant\'s audit log (`key_directory.alert`) and sent to the tenant\'s owners (socket event `key_directory_alert`, push). 202 once recorded.',
    body: KeyDirectoryReportRequest,
    responses: { 202: KeyDirectoryReportAccepted },
    errors: [400, 401, 403],
  }),
};
