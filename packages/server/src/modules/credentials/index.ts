/**
 * Verifiable credentials (contract §4.11; design §8.16): the platform issuer, issuance and
 * verification of trust credentials, and the trust JSON-LD context. The area's public surface.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import type { HubDidService } from '../hub/index.js';
import { trustContextUrl } from './contexts.js';
import { createDocumentLoader } from './document-loader.js';
import { PlatformIssuer } from './issuer.js';
import { credentialRoutes, trustContextRoutes } from './routes.js';
import { CredentialService } from './service.js';
import { CredentialVerifier } from './verifier.js';

export { PlatformIssuer } from './issuer.js';

/**
 * The platform issuer (`CREDENTIAL_PLATFORM_HUB_ADDRESS`), its key loaded. Its address is
 * reserved in the hub and resolves to its own DID document (design §8.16).
 */
export async function createPlatformIssuer(d: Pick<Platform, 'db' | 'secrets' | 'config'>): Promise<PlatformIssuer> {
  const issuer = new PlatformIssuer(d.db, d.secrets, d.config.credentials.platformHubAddress, d.config.publicUrl);
  await issuer.init();
  return issuer;
}

/** Credential routes and the trust context (`did:hub` resolved through `hubDid`). */
export function createCredentials(d: Pick<Platform, 'db' | 'config'> & { issuer: PlatformIssuer; hubDid: HubDidService }): Area {
  const trustContext = trustContextUrl(d.config.publicUrl);
  const loader = () => createDocumentLoader({ trustContextUrl: trustContext, dids: d.hubDid });
  const credentials = new CredentialService({ db: d.db, issuer: d.issuer, trustContextUrl: trustContext, loader, ttlDays: d.config.credentials.ttlDays });
  const verifier = new CredentialVerifier({ db: d.db, loader });
  return {
    async routes(app) {
      await app.register(credentialRoutes, { prefix: API_PREFIX, credentials, verifier, rateLimits: d.config.rateLimits });
      await app.register(trustContextRoutes, { trustContextUrl: trustContext });
    },
  };
}
