/**
 * The tool server's access to the Parley service (design §8.27): one authenticated
 * {@link ParleyClient} for the agent (its API key, or its enrolled device's JWT renewed by the
 * challenge route with the device's Ed25519 key, contract §4.4 / design §5) and an anonymous one for
 * the public routes (marketplace and hub search answer without credentials).
 */
import { ed25519Sign, hexToBytes, ParleyClient, renewDeviceToken, startTokenAutoRenew, type AutoRenewHandle, type FetchLike } from '@parley/sdk';
import type { McpConfig } from './config.js';

/** Clients for one tool call: `agent` (authenticated) and `anonymous`, both sending its `traceparent`. */
export interface CallClients {
  agent(): Promise<ParleyClient>;
  anonymous: ParleyClient;
}

/** The service access of one tool server process. */
export class ServiceAccess {
  private deviceJwt: string | undefined;
  private renewing: Promise<void> | undefined;
  private autoRenew: AutoRenewHandle | undefined;
  private readonly base: ParleyClient;

  constructor(
    readonly config: McpConfig,
    private readonly fetchImpl?: FetchLike,
  ) {
    this.base = this.client();
  }

  private client(headers?: Record<string, string>): ParleyClient {
    const c = this.config.credentials;
    return new ParleyClient({
      baseUrl: this.config.endpoint,
      ...(c.kind === 'api_key' ? { apiKey: c.apiKey } : { deviceToken: () => this.deviceJwt }),
      ...(headers ? { headers } : {}),
      ...(this.fetchImpl ? { fetch: this.fetchImpl } : {}),
    });
  }

  /** Make sure a device JWT is held (device credentials only): renew it by challenge on first use, then keep it fresh. */
  private async ensureDeviceToken(): Promise<void> {
    const c = this.config.credentials;
    if (c.kind !== 'device' || this.deviceJwt !== undefined) return;
    this.renewing ??= (async () => {
      const secret = hexToBytes(c.privateKeyHex, 32, 'PARLEY_PRIVATE_KEY');
      const sign = (m: Uint8Array) => ed25519Sign(m, secret);
      const token = await renewDeviceToken(this.base, c.deviceId, sign, { setToken: false });
      this.deviceJwt = token.device_jwt;
      this.autoRenew = startTokenAutoRenew(this.base, {
        deviceId: c.deviceId,
        sign,
        expiresAt: token.expires_at,
        onRenewed: (t) => {
          this.deviceJwt = t.device_jwt;
        },
      });
    })().finally(() => {
      this.renewing = undefined;
    });
    await this.renewing;
  }

  /** Clients for one tool call whose requests carry `traceparent`. */
  forCall(traceparent: string): CallClients {
    const headers = { traceparent };
    const agent = this.client(headers);
    const anonymous = new ParleyClient({ baseUrl: this.config.endpoint, headers, ...(this.fetchImpl ? { fetch: this.fetchImpl } : {}) });
    return {
      agent: async () => {
        await this.ensureDeviceToken();
        return agent;
      },
      anonymous,
    };
  }

  /** The agent's client without a trace header (span export). */
  async agent(): Promise<ParleyClient> {
    await this.ensureDeviceToken();
    return this.base;
  }

  /** Stop renewing the device JWT. */
  close(): void {
    this.autoRenew?.stop();
  }
}
