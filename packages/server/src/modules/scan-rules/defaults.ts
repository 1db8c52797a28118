/**
 * The built-in client-side scan rule set (version 0), served to a tenant that saved none
 * (contract §4.14, §6.1 rule 5). Rules detect secrets and personal data in outgoing plaintext; the
 * client runs them before encryption (the service never sees plaintext). `block` stops the send,
 * `warn` lets it through and reports the match to the application.
 */
import type { ScanRule } from '@parley/protocol';

export const DEFAULT_SCAN_RULES: readonly ScanRule[] = [
  { id: 'private-key', name: 'Private key block', pattern: '-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----', action: 'block', severity: 'critical' },
  { id: 'aws-access-key', name: 'AWS access key id', pattern: '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b', action: 'block', severity: 'high' },
  { id: 'github-token', name: 'GitHub token', pattern: '\\bgh[pousr]_[A-Za-z0-9]{36,255}\\b', action: 'block', severity: 'high' },
  { id: 'slack-token', name: 'Slack token', pattern: '\\bxox[abposr]-[A-Za-z0-9-]{10,100}', action: 'block', severity: 'high' },
  { id: 'parley-api-key', name: 'Parley API key', pattern: '\\bsvc_agent_sk_(?:prod|staging|dev)_[0-9a-f]{64}\\b', action: 'block', severity: 'high' },
  { id: 'jwt', name: 'JSON Web Token', pattern: '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}', action: 'warn', severity: 'medium' },
  { id: 'payment-card', name: 'Payment card number', pattern: '\\b(?:4\\d{3}|5[1-5]\\d{2}|3[47]\\d{2}|6011)(?:[ -]?\\d{4}){2}[ -]?\\d{1,4}\\b', action: 'warn', severity: 'medium' },
  { id: 'us-ssn', name: 'US social security number', pattern: '\\b\\d{3}-\\d{2}-\\d{4}\\b', action: 'warn', severity: 'medium' },
  { id: 'email', name: 'E-mail address', pattern: '\\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\\.[A-Za-z]{2,24}\\b', action: 'warn', severity: 'low' },
];
