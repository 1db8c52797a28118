// An owner that talks to its agent end to end: a question, then a decision request.
// Run: PARLEY_OWNER_TOKEN=$(npm run -s cli -- owner-token --sub you@example.com) npm run -s example:owner
import { connectOwner, describeMessage, KeyFileSource } from '@parley/sdk/node';

const env = process.env;
const owner = await connectOwner({
  server: env.PARLEY_URL ?? 'http://127.0.0.1:8080',
  ownerToken: env.PARLEY_OWNER_TOKEN ?? '',
  stateDir: env.PARLEY_OWNER_STATE_DIR ?? '.parley/owner', // this owner device's keys and sessions
  protection: new KeyFileSource(env.PARLEY_OWNER_KEY_FILE ?? '.parley/owner.key'),
});
const chat = await owner.conversationWith(env.PARLEY_AGENT); // your newest agent, or the one named
const answer = await owner.ask(chat, 'Hello agent, how many words is this?');
console.log(`agent: ${describeMessage(answer)}`);
const decision = await owner.ask(chat, {
  type: 'decision_request',
  payload: {
    title: 'Deploy the new model?',
    options: [
      { option_id: 'now', label: 'Deploy now', risk_level: 'high' },
      { option_id: 'canary', label: 'Canary first', risk_level: 'low' },
    ],
  },
});
console.log(`agent: ${describeMessage(decision)}`);
await owner.close();
