// Your own agent: enroll with an invite token (or run on an API key), answer your owner end to end.
// Run from the repository: PARLEY_INVITE=svc_tok_… npm run -s example:agent
import { KeyFileSource, runAgent } from '@parley/sdk/node';

const env = process.env;
const agent = await runAgent({
  server: env.PARLEY_URL ?? 'http://127.0.0.1:8080',
  invite: env.PARLEY_INVITE, // first run: the invite token from your owner…
  apiKey: env.PARLEY_API_KEY, // …or an API key (svc_agent_sk_…) instead
  stateDir: env.PARLEY_STATE_DIR ?? '.parley/custom-agent', // keys and sessions, sealed under the key file
  protection: new KeyFileSource(env.PARLEY_KEY_FILE ?? '.parley/custom-agent.key'),
  onMessage: async (message, reply) => {
    if (message.text === undefined) return; // alerts, artifacts…: message.content
    const words = message.text.trim().split(/\s+/).length;
    await reply(`I read ${words} words. Call your model here.`);
  },
  // A decision request from the owner: choose the option of lowest risk.
  onDecisionRequest: (request) => request.options.find((o) => o.risk_level === 'low')?.option_id,
});
console.log(`agent ${agent.deviceId} running; Ctrl-C stops it`);
process.once('SIGINT', () => void agent.stop());
console.log(`agent ended: ${(await agent.done).reason}`);
