/**
 * Key bindings (docs/decisions.md "Key bindings"): fresh, signed nonces proving that a
 * registration or activation holds its identity key. The area's public surface.
 */
import { API_PREFIX, type Area, type Platform } from '../../http/area.js';
import { keyBindingRoutes } from './routes.js';
import { KeyBindingService } from './service.js';

export type { KeyBindingService } from './service.js';

/** The key-binding area and its service. */
export interface KeyBindingArea extends Area {
  keyBinding: KeyBindingService;
}

/** Key bindings, required or optional per `KEY_BINDING_REQUIRED`; loads the binding key. */
export async function createKeyBinding(d: Pick<Platform, 'db' | 'secrets' | 'config'>): Promise<KeyBindingArea> {
  const keyBinding = new KeyBindingService(d.db, d.secrets, { required: d.config.keyBindingRequired });
  await keyBinding.init();
  return {
    keyBinding,
    async routes(app) {
      await app.register(keyBindingRoutes, { prefix: API_PREFIX, keyBinding });
    },
  };
}
