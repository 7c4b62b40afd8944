// What the user needs to point an agent at the bridge's MCP endpoint: the
// configuration each agent reads, filled in with the endpoint's URL and
// token, and how the agent terminals are named.
import type { McpStatusResult } from './protocol.gen';

/** Where mcp/start serves the tools: its URL and bearer token. */
export type Endpoint = Required<Pick<McpStatusResult, 'url' | 'token'>>;

export interface ConfigSnippet {
  /** What the user picks in the quick pick. */
  label: string;
  detail: string;
  /** What goes on the clipboard. */
  text: string;
}

/**
 * snippets gives, for each agent, what registers the endpoint with it:
 * OpenHands' agent spec (mcp_config), Claude Code's command line, Codex's
 * config.toml (the token through an environment variable, as Codex
 * requires), Gemini CLI's settings.json, and the generic mcpServers JSON.
 */
export function snippets(ep: Endpoint): ConfigSnippet[] {
  const auth = `Bearer ${ep.token}`;
  return [
    {
      label: 'OpenHands agent (mcp_config)',
      detail: 'The agent spec of POST /api/conversations, with "tools": [] so every command and edit happens here',
      text: JSON.stringify({ 'oh-bridge': { transport: 'http', url: ep.url, headers: { Authorization: auth } } }, null, 2),
    },
    {
      label: 'Claude Code',
      detail: 'A command to run in the workspace',
      text: `claude mcp add --transport http oh-bridge ${ep.url} --header "Authorization: ${auth}"`,
    },
    {
      label: 'Codex (~/.codex/config.toml)',
      detail: 'Then export OH_BRIDGE_TOKEN in the shell that starts codex',
      text: `[mcp_servers.oh-bridge]\nurl = "${ep.url}"\nbearer_token_env_var = "OH_BRIDGE_TOKEN"\n\n# export OH_BRIDGE_TOKEN=${ep.token}`,
    },
    {
      label: 'Gemini CLI (.gemini/settings.json)',
      detail: 'The mcpServers entry',
      text: JSON.stringify({ mcpServers: { 'oh-bridge': { type: 'http', url: ep.url, headers: { Authorization: auth } } } }, null, 2),
    },
    {
      label: 'Any MCP client (mcpServers JSON)',
      detail: 'Streamable HTTP with a bearer token',
      text: JSON.stringify({ mcpServers: { 'oh-bridge': { type: 'http', url: ep.url, headers: { Authorization: auth } } } }, null, 2),
    },
  ];
}

/** Whether a bridge terminal belongs to an agent (its view is read-only). */
export function isAgentTerminal(terminalId: string): boolean {
  return terminalId === 'oh-agent' || /^agent-\d+$/.test(terminalId);
}

/** The title of a mirrored terminal. */
export function terminalTitle(terminalId: string, name: string | undefined): string {
  if (terminalId === 'oh-agent') return 'OpenHands: agent';
  if (name !== undefined && name !== '') return name.startsWith('OpenHands') ? name : `OpenHands: ${name}`;
  return `OpenHands: ${terminalId}`;
}
