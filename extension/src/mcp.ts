// What the user needs to point an agent at the bridge's MCP endpoint: the
// configuration each agent reads, filled in with the endpoint's URL and
// token, and how the agent terminals are named.
import type { McpStatusResult } from './protocol.gen';
import configs from './agents/configs.json';

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
 * OpenHands' agent spec (mcp_config), then each agent's block from
 * agents/configs.json (the one source the docs and the real-agent tests
 * use too, so what is copied here is what CI ran), and the generic
 * mcpServers JSON.
 */
export function snippets(ep: Endpoint): ConfigSnippet[] {
  const auth = `Bearer ${ep.token}`;
  const fill = (text: string): string => text.replaceAll('{URL}', ep.url).replaceAll('{TOKEN}', ep.token);
  return [
    {
      label: 'OpenHands agent (mcp_config)',
      detail: 'The agent spec of POST /api/conversations, with "tools": [] so every command and edit happens here',
      text: JSON.stringify({ 'oh-bridge': { transport: 'http', url: ep.url, headers: { Authorization: auth } } }, null, 2),
    },
    ...configs.agents.flatMap((a) => ('mcpJson' in a ? [a.http, a.mcpJson] : [a.http]))
      .map((b) => ({ label: b.label, detail: b.detail, text: fill(b.text) })),
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
