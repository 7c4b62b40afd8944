// One line (or a few) for each event of the agent-server's conversation,
// for the "OpenHands Conversation" output channel: what the agent says and
// does, and what the bridge answered. Commands and edits themselves show
// in the agent's terminal and the buffers.

import type { FileEditorArgs, TerminalArgs } from './protocol.gen';
import { cardKindOf } from './transcript';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v)) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function texts(content: unknown): string {
  return Array.isArray(content) ? content.map((c) => str(obj(c).text)).join('\n') : '';
}

function clip(s: string, lines: number): string {
  const all = s.replace(/\n+$/, '').split('\n');
  return all.length <= lines ? all.join('\n') : [...all.slice(0, lines), `… (${all.length - lines} more lines)`].join('\n');
}

const indent = (s: string): string => s.split('\n').map((l) => `    ${l}`).join('\n');

/** The line for an event of openhands/did_receive_event, or undefined for one not worth a line. */
export function describeEvent(event: unknown): string | undefined {
  const e = obj(event);
  switch (e.kind) {
    case 'MessageEvent': {
      const who = e.source === 'user' ? 'You' : 'Agent';
      return `${who}: ${texts(obj(e.llm_message).content)}`;
    }
    case 'ActionEvent': {
      const action = obj(e.action);
      const data = obj(action.data);
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
          return `${head}Agent finished: ${str(action.message)}`;
        case 'think':
          return `Agent thinks: ${clip(str(action.thought), 5)}`;
        default:
          return `${head}Agent calls ${str(e.tool_name)}`;
      }
    }
    case 'ObservationEvent': {
      const o = obj(e.observation);
      if (o.kind !== 'MCPToolObservation') return undefined;
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
