/**
 * The 13 tools of the tool server (contract §4.19 and design §8.28's `svc_discover_agents`), in the
 * order they are listed.
 */
import type { ToolDef } from '../tool.js';
import { discoverAgents, discoverSkills, getAgentInfo } from './discovery.js';
import { checkPolicy, delegateSkill, registerAgent, submitAudit } from './governance.js';
import { connectAgent, subscribe } from './market.js';
import { openChannel, pollMessages, sendMessage } from './messaging.js';
import { composeTeam } from './team.js';

/** Every tool, by listing order. */
export const TOOLS: readonly ToolDef[] = [
  discoverSkills,
  sendMessage,
  checkPolicy,
  submitAudit,
  getAgentInfo,
  subscribe,
  connectAgent,
  composeTeam,
  registerAgent,
  delegateSkill,
  openChannel,
  pollMessages,
  discoverAgents,
] as unknown as readonly ToolDef[];
