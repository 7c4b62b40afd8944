// The status bar text: the bridge process and the OpenHands connection in
// one short line.
import type { Status } from './protocol.gen';

export type BridgeState = 'starting' | 'running' | 'restarting' | 'stopped' | 'missing';

/** The connection's status before the bridge reports one: no conversation. */
export const disconnected: Status = { protocol: '', state: 'disconnected', serverUrl: '', events: 0, runningActions: 0 };

export interface StatusView {
  text: string;
  tooltip: string;
}

export function statusView(bridge: BridgeState, conn: Status): StatusView {
  switch (bridge) {
    case 'missing':
      return { text: '$(error) OpenHands: no bridge', tooltip: 'The oh-bridge binary was not found. Click for commands.' };
    case 'starting':
      return { text: '$(sync~spin) OpenHands', tooltip: 'Starting the OpenHands bridge…' };
    case 'restarting':
      return { text: '$(sync~spin) OpenHands: restarting', tooltip: 'The bridge stopped unexpectedly and is being restarted.' };
    case 'stopped':
      return { text: '$(error) OpenHands: bridge stopped', tooltip: 'The bridge stopped. See "OpenHands: Show Bridge Log".' };
    case 'running':
      break;
  }
  const conversation = conn.conversationId === undefined ? '' : conn.conversationId.slice(0, 8);
  switch (conn.state) {
    case 'disconnected':
      return { text: '$(debug-disconnect) OpenHands: Disconnected', tooltip: 'Not connected to an OpenHands server. Click to connect.' };
    case 'connecting':
      return { text: '$(sync~spin) OpenHands: Connecting', tooltip: 'Connecting to the OpenHands server…' };
    case 'reconnecting':
      return { text: '$(sync~spin) OpenHands: Reconnecting', tooltip: `Connection lost; reconnecting. ${conn.error ?? ''}`.trim() };
    case 'failed':
      return { text: '$(error) OpenHands: Failed', tooltip: conn.error ?? 'The connection failed.' };
    case 'connected': {
      // Through a relay, the tooltip says which window the agent reaches.
      const down = conn.viaDown === undefined || conn.viaDown === '' ? '' : ` Now ${conn.viaDown}.`;
      const via = conn.via === undefined || conn.via === '' ? '' : ` Reached through ${conn.via}.${down}`;
      const agent = agentView(conn.executionStatus, conversation);
      if (agent !== undefined) return { ...agent, tooltip: `${agent.tooltip} Conversation ${conn.conversationId ?? ''}.${via}` };
      const n = conn.runningActions;
      if (n > 0) {
        return { text: `$(loading~spin) OpenHands: Running ${n} action${n === 1 ? '' : 's'}`, tooltip: `Conversation ${conversation}.${via}` };
      }
      return { text: `$(check) OpenHands: Connected (${conversation})`, tooltip: `Conversation ${conn.conversationId ?? ''}.${via}` };
    }
    default:
      // A state this extension does not know yet.
      return { text: `$(question) OpenHands: ${conn.state}`, tooltip: `The connection is ${conn.state}. ${conn.error ?? ''}`.trim() };
  }
}

// agentView is the status of the agent-server's agent, when it says more
// than "connected".
function agentView(status: string | undefined, conversation: string): StatusView | undefined {
  switch (status) {
    case 'running':
      return { text: '$(loading~spin) OpenHands: Agent working', tooltip: 'The agent is working.' };
    case 'waiting_for_confirmation':
      return { text: '$(question) OpenHands: Waiting for you', tooltip: 'The agent waits for your answer to its next action.' };
    case 'paused':
      return { text: '$(debug-pause) OpenHands: Paused', tooltip: 'The agent is paused; "OpenHands: Resume Agent" lets it go on.' };
    case 'finished':
      return { text: `$(pass) OpenHands: Done (${conversation})`, tooltip: 'The agent finished; send a message to go on.' };
    case 'error':
      return { text: '$(warning) OpenHands: Agent error', tooltip: 'The agent stopped on an error; see the conversation.' };
    case 'stuck':
      return { text: '$(warning) OpenHands: Agent stuck', tooltip: 'The agent repeats itself and was stopped; send a message to steer it.' };
    default:
      return undefined;
  }
}
