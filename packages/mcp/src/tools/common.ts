/**
 * Schema pieces and helpers shared by the tools (contract §4.19).
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ToolError } from '../errors.js';
import { didOf, hubAddress } from '../hub-names.js';

/** `T | null` in an output schema. */
export const OrNull = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A hub name: an address (`my-agent`) or its DID (`did:hub:my-agent`). */
export const HubName = Type.String({ minLength: 3, maxLength: 40, description: 'hub address (e.g. research-bot) or DID (did:hub:research-bot)' });

/** W3C trace id argument. */
export const TraceId = Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'W3C trace id (32 hex) the call joins' });
/** W3C parent span id argument. */
export const ParentSpanId = Type.String({ pattern: '^[0-9a-fA-F]{16}$', description: 'W3C span id (16 hex) of the caller’s span; the tool’s span becomes its child' });

/**
 * The hub address of a name or `did:hub:` DID, lowercased (design §8.13).
 * @throws ToolError when it is neither.
 */
export function hubAddressOf(nameOrDid: string): string {
  const address = hubAddress(nameOrDid);
  if (address === undefined) throw new ToolError(`"${nameOrDid}" is not a hub name (3-32 of a-z, 0-9, -) nor a did:hub: DID`);
  return address;
}

export { didOf };
