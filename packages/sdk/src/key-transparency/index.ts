/**
 * Key transparency (design §8.39): the verifier of the key directory's answers, and the client
 * that looks keys up before a session trusts them and watches the device's own entries.
 */
export * from './verify.js';
export * from './client.js';
