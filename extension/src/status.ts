// The status bar text: the bridge process and the OpenHands connection in
// one short line.
export type BridgeState = 'starting' | 'running' | 'restarting' | 'stopped' | 'missing';

export interface ConnectionStatus {
  state: 'disconnected' | 'connecting' | 'connected' | 'reconnecting' | 'failed';
  conversationId?: string;
  runningActions?: number;
  error?: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
}

export function statusView(bridge: BridgeState, conn: ConnectionStatus): StatusView {
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
      const n = conn.runningActions ?? 0;
      if (n > 0) {
        return { text: `$(loading~spin) OpenHands: Running ${n} action${n === 1 ? '' : 's'}`, tooltip: `Conversation ${conversation}` };
      }
      return { text: `$(check) OpenHands: Connected (${conversation})`, tooltip: `Conversation ${conn.conversationId ?? ''}` };
    }
  }
}
