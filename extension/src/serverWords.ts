// The words around finding and starting an agent-server: the question
// before a start, and what the person is told after. Pure: no vscode.
import type { FoundServer, Owner, StartWay } from './protocol.gen';

/** What the person is asked before a server starts: the way and its command. */
export function startQuestion(way: StartWay): { message: string; detail: string } {
  return {
    message: 'No OpenHands agent-server is running on this machine. Start one?',
    detail: `${way.description.charAt(0).toUpperCase()}${way.description.slice(1)}:\n\n${way.command.replace(/--port 0$/, '--port <a free port>')}\n\n` +
      'It listens on 127.0.0.1 only, with a new session key, and stops when this window closes.',
  };
}

/** The words for a found or started server, said once. */
export function foundWords(found: FoundServer): string {
  return `OpenHands: using ${found.description}.`;
}

/** The words saying where the agent's model came from, when the editor's settings name none. */
export function llmWords(source: string): string {
  return `OpenHands: the agent uses the model and key from ${source}. Set "openhands.llm.model" (and "OpenHands: Set LLM API Key") to use another.`;
}

/** The question about a server found on this machine that another user runs: who runs it, and what it would get. */
export function trustQuestion(serverUrl: string, owner: Owner): { message: string; detail: string } {
  return {
    message: `An agent-server on ${serverUrl.replace(/^https?:\/\//, '')} is run by ${owner.description}, not by you. Use it?`,
    detail: 'Your keys, and this workspace\'s tools (its terminals and files), go to the server you use. ' +
      'Use it only if you know this user\'s server is meant for you; otherwise the bridge can start one of yours.',
  };
}

/** What the bridge's error says beside its message (its error.data): its kind, and a server's URL and owner. */
export function errorData(err: unknown): { kind?: string; serverUrl?: string; owner?: Owner } {
  const data = (err as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null) return {};
  const d = data as Record<string, unknown>;
  const owner = d.owner as Owner | undefined;
  return {
    ...(typeof d.kind === 'string' ? { kind: d.kind } : {}),
    ...(typeof d.serverUrl === 'string' ? { serverUrl: d.serverUrl } : {}),
    ...(typeof owner === 'object' && owner !== null && typeof owner.uid === 'number' && typeof owner.description === 'string' ? { owner } : {}),
  };
}
