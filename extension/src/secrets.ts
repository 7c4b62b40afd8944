// The keys under which the extension keeps its secrets (VS Code's
// SecretStorage) and this workspace's last conversation (its
// workspaceState).

/** The agent-server's session API key. */
export const secretKey = 'openhands.sessionApiKey';
/** The API key of the agent's LLM. */
export const llmSecretKey = 'openhands.llmApiKey';
/** The pairing secret of the relay in openhands.relayUrl. */
export const relaySecretKey = 'openhands.relaySecret';
/** The last conversation of this workspace: {serverUrl, conversationId}. */
export const lastConversationKey = 'openhands.lastConversation';
