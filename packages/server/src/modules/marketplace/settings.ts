/**
 * The tenant's default payment method (design §8.29): used by a rental that names none (the MCP
 * tool `svc_subscribe` rents with it). Setting it is audited (`marketplace.payment_method_set`,
 * without the reference itself). And what a client needs to make a payment method for the
 * processor in use ({@link processorInfo}).
 */
import type { PaymentMethodInfo, PaymentProcessorInfo } from '@parley/protocol';
import type { Db } from '../../db/client.js';
import { withTenant } from '../../db/tenant.js';
import { appendAudit } from '../audit/index.js';
import type { MarketCaller } from './caller.js';
import { LOCAL_PM_ASYNC, LOCAL_PM_DECLINED, LOCAL_PM_SUCCEEDS } from './payments/local.js';
import type { ProcessorName } from './payments/processor.js';
import { getPaymentMethod, setPaymentMethod } from './settings-repo.js';

/**
 * The processor in use as `GET /marketplace/processor` answers it: Stripe with its publishable key
 * (`STRIPE_PUBLISHABLE_KEY`, null when unset), or the local processor with its test payment methods.
 */
export function processorInfo(processor: ProcessorName, publishableKey: string | null): PaymentProcessorInfo {
  return processor === 'stripe'
    ? { processor, publishable_key: publishableKey, test_payment_methods: [] }
    : { processor, publishable_key: null, test_payment_methods: [LOCAL_PM_SUCCEEDS, LOCAL_PM_DECLINED, LOCAL_PM_ASYNC] };
}

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
