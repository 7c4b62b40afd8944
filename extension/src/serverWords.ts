// The words around finding and starting an agent-server: the question
// before a start, and what the person is told after. Pure: no vscode.
import type { FoundServer, StartWay } from './protocol.gen';

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
