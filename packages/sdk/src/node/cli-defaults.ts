/**
 * Defaults of the command-line tools run from a checkout (`npm run agent`, README tour): where
 * they keep their files and which service they talk to.
 */

/**
 * Default state directory of `parley-agent` (relative to the working directory, the repository
 * root for `npm run agent`): under `.parley/`, which the repository's `.gitignore` covers, so the
 * agent's keys never land among the files a commit would pick up.
 */
export const DEFAULT_AGENT_STATE_DIR = '.parley/agent-state';

/**
 * The service base URL a command uses when given none: the one the service itself is configured
 * with from the same variables (the server's config.ts), so that one `PORT` (or `PUBLIC_URL`)
 * set in the shell serves every command: `PUBLIC_URL`, else `http://HOST:PORT` with `HOST`
 * default `127.0.0.1` and `PORT` default `8080`. No trailing slash.
 */
export function serviceUrlFromEnv(env: Record<string, string | undefined>): string {
  return (env.PUBLIC_URL || `http://${env.HOST || '127.0.0.1'}:${env.PORT || '8080'}`).replace(/\/+$/, '');
}
