/** The development sign-in page of the built-in identity provider (docs/operations.md). The area's public surface. */
import type { DevIdentityProvider } from '../../auth/dev-idp.js';
import type { Config } from '../../config.js';
import type { Area } from '../../http/area.js';
import { devLoginRoutes } from './routes.js';

/** Dev sign-in routes (refused when OIDC is configured). */
export function createDevLogin(d: { config: Config; devIdp: DevIdentityProvider | undefined }): Area {
  return {
    async routes(app) {
      await app.register(devLoginRoutes, { devIdp: d.devIdp, host: d.config.host, oidc: d.config.oidc, publicUrl: d.config.publicUrl });
    },
  };
}
