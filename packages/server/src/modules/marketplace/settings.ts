/**
 * The tenant's default payment method (DESIGN §8.29): used by a rental that names none (the MCP
 * tool `svc_subscribe` rents with it). Setting it is audited (`marketplace.payment_method_set`,
 * without the reference itself).
 */
import type { PaymentMethodInfo } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/service.js';
import type { MarketCaller } from './caller.js';
import { getPaymentMethod, setPaymentMethod } from './settings-repo.js';

export class MarketplaceSettings {
  constructor(private readonly db: Db) {}

  /** The tenant's default payment method (null when unset). */
  async getPaymentMethod(c: MarketCaller): Promise<PaymentMethodInfo> {
    return { payment_method: await withTenant(this.db, c.tenantId, (tx) => getPaymentMethod(tx, c.tenantId)) };
  }

  /** Set the tenant's default payment method (owner). */
  setPaymentMethod(tenantId: string, actor: string, paymentMethod: string): Promise<PaymentMethodInfo> {
    return withTenant(this.db, tenantId, async (tx) => {
      await setPaymentMethod(tx, tenantId, paymentMethod, actor);
      await appendAudit(tx, tenantId, { type: 'marketplace.payment_method_set', actor, data: {} });
      return { payment_method: paymentMethod };
    });
  }
}
