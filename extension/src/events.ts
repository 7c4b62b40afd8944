// One line (or a few) for each event of the agent-server's conversation,
// for the "OpenHands Conversation" output channel: what the agent says and
// does, and what the bridge answered. Commands and edits themselves show
// in the agent's terminal and the buffers.
//
// The events' shapes are the bridge's (package ohevents), generated into
// protocol.gen.ts; an event of a kind they do not name (a later server's)
// gets no line. The server may leave a field out or send it as null, so
// each is read with a fallback.

import { agentServerEventKinds, type AgentServerEvent, type FileEditorArgs, type TerminalArgs, type TextContent } from './protocol.gen';
import { cardKindOf } from './transcript';

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v)) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function texts(content: readonly TextContent[] | null | undefined): string {
  // A string where the list should be (another producer's message) has no blocks.
  if (content === null || content === undefined || typeof content !== 'object') return '';
  return content.map((c) => str(c.text)).join('\n');
}

function clip(s: string, lines: number): string {
  const all = s.replace(/\n+$/, '').split('\n');
  return all.length <= lines ? all.join('\n') : [...all.slice(0, lines), `… (${all.length - lines} more lines)`].join('\n');
}

const indent = (s: string): string => s.split('\n').map((l) => `    ${l}`).join('\n');

const kinds: ReadonlySet<string> = new Set(agentServerEventKinds);

/** The event as one of the kinds the bridge reads, or undefined for another kind or no event. */
export function agentServerEvent(event: unknown): AgentServerEvent | undefined {
  if (event === null || typeof event !== 'object' || !('kind' in event) || typeof event.kind !== 'string' || !kinds.has(event.kind)) {
    return undefined;
  }
  // The kind is one of the union's, which the bridge decoded as that type.
  return event as AgentServerEvent;
}

/** The line for an event of openhands/did_receive_event, or undefined for one not worth a line. */
export function describeEvent(event: unknown): string | undefined {
  const e = agentServerEvent(event);
  if (e === undefined) return undefined;
  switch (e.kind) {
    case 'MessageEvent': {
      const who = e.source === 'user' ? 'You' : 'Agent';
      return `${who}: ${texts(e.llm_message?.content)}`;
    }
    case 'ActionEvent': {
      // The tool's arguments are the tool's own: read as the tool declares them.
      const data = obj(e.action?.data);
      const thought = texts(e.thought);
      const head = thought === '' ? '' : `Agent thinks: ${clip(thought, 3)}\n`;
      // The bridge's tools by how they are shown (their declarations'
      // card kinds); the agent's own by name.
      const args: Partial<Record<keyof TerminalArgs | keyof FileEditorArgs, unknown>> = data;
      switch (cardKindOf(str(e.tool_name))) {
        case 'command':
          return `${head}Agent runs: ${str(args.command)}`;
        case 'file':
          return str(args.command) === ''
            ? `${head}Agent shows: ${str(args.path)}`
            : `${head}Agent edits (${str(args.command)}): ${str(args.path)}`;
        case 'plan':
          return `${head}Agent updates its task list`;
        default:
          break;
      }
      switch (e.tool_name) {
        case 'finish':
          return `${head}Agent finished: ${str(e.action?.message)}`;
        case 'think':
          return `Agent thinks: ${clip(str(e.action?.thought), 5)}`;
        default:
          return `${head}Agent calls ${str(e.tool_name)}`;
      }
    }
    case 'ObservationEvent': {
      const o = e.observation;
      if (o?.kind !== 'MCPToolObservation') return undefined;
      // The first block is the SDK's "[Tool 'x' executed.]".
      const body = texts(o.content).split('\n').slice(1).join('\n');
      return `${o.is_error === true ? 'Failed' : 'Result'} (${str(e.tool_name)}):\n${indent(clip(body, 12))}`;
    }
    case 'UserRejectObservation':
      return `Rejected (${str(e.tool_name)}): ${str(e.rejection_reason)}`;
    case 'AgentErrorEvent':
      return `Agent error (${str(e.tool_name)}): ${str(e.error)}`;
    case 'ConversationErrorEvent':
      return `Conversation error: ${str(e.detail)}`;
    case 'PauseEvent':
      return 'Paused.';
    default:
      return undefined;
  }
}
