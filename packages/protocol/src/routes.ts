/**
 * The route table: every REST operation of the service, keyed by the SDK method that calls it,
 * assembled from one file per contract area (`areas/*.ts`).
 */
import { platformRoutes } from './areas/platform.js';
import { tenantsRoutes } from './areas/tenants.js';
import { devicesRoutes } from './areas/devices.js';
import { keyBindingRoutes } from './areas/key-binding.js';
import { conversationsRoutes } from './areas/conversations.js';
import { mlsRoutes } from './areas/mls.js';
import { pqPrekeysRoutes } from './areas/pq-prekeys.js';
import { prekeysRoutes } from './areas/prekeys.js';
import { attachmentsRoutes } from './areas/attachments.js';
import { apiKeysRoutes } from './areas/api-keys.js';
import { roomsRoutes } from './areas/rooms.js';
import { policiesRoutes } from './areas/policies.js';
import { settingsRoutes } from './areas/settings.js';
import { workspacesRoutes } from './areas/workspaces.js';
import { hubRoutes } from './areas/hub.js';
import { credentialsRoutes } from './areas/credentials.js';
import { federationRoutes } from './areas/federation.js';
import { a2aRoutes } from './areas/a2a.js';
import { telemetryRoutes } from './areas/telemetry.js';
import { auditRoutes } from './areas/audit.js';
import { keyDirectoryRoutes } from './areas/key-directory.js';
import { trustRoutes } from './areas/trust.js';
import { grantsRoutes } from './areas/grants.js';
import { shadowRoutes } from './areas/shadow.js';
import { decisionsRoutes } from './areas/decisions.js';
import { marketplaceRoutes } from './areas/marketplace.js';
import { telemetryExportRoutes } from './areas/telemetry-export.js';
import { spendRoutes } from './areas/spend.js';
import { receiptsRoutes } from './areas/receipts.js';

export const ROUTES = {
  ...platformRoutes,
  ...tenantsRoutes,
  ...devicesRoutes,
  ...keyBindingRoutes,
  ...conversationsRoutes,
  ...mlsRoutes,
  ...pqPrekeysRoutes,
  ...prekeysRoutes,
  ...attachmentsRoutes,
  ...apiKeysRoutes,
  ...roomsRoutes,
  ...policiesRoutes,
  ...settingsRoutes,
  ...workspacesRoutes,
  ...hubRoutes,
  ...credentialsRoutes,
  ...federationRoutes,
  ...a2aRoutes,
  ...telemetryRoutes,
  ...auditRoutes,
  ...keyDirectoryRoutes,
  ...trustRoutes,
  ...grantsRoutes,
  ...shadowRoutes,
  ...decisionsRoutes,
  ...marketplaceRoutes,
  ...telemetryExportRoutes,
  ...spendRoutes,
  ...receiptsRoutes,
};

/** Name of a route in {@link ROUTES} (= the `ParleyClient` method calling it). */
export type RouteName = keyof typeof ROUTES;
