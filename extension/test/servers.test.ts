// Unit tests of the words around finding and starting an agent-server
// (serverWords.ts): the question before a start shows the exact command, and
// the words after name the server and where its key came from, never a key.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { errorData, foundWords, llmWords, startQuestion, trustQuestion } from '../src/serverWords';

void test('servers: the question before a start names the way and shows its command', () => {
  const q = startQuestion({ kind: 'uvx', command: '/usr/bin/uvx --from openhands-agent-server==1.49.1 agent-server --host 127.0.0.1 --port 0', description: "OpenHands' agent-server 1.49.1 from PyPI, through uvx" });
  assert.equal(q.message, 'No OpenHands agent-server is running on this machine. Start one?');
  assert.equal(q.detail, "OpenHands' agent-server 1.49.1 from PyPI, through uvx:\n\n/usr/bin/uvx --from openhands-agent-server==1.49.1 agent-server --host 127.0.0.1 --port <a free port>\n\n" +
    'It listens on 127.0.0.1 only, with a new session key, and stops when this window closes.');
  assert.match(startQuestion({ kind: 'installed', command: 'agent-server --host 127.0.0.1 --port 0', description: 'the installed OpenHands agent-server (agent-server)' }).detail, /^The installed/);
});

void test('servers: the words after name the server, never its key', () => {
  const words = foundWords({ serverUrl: 'http://127.0.0.1:8000', serverVersion: '1.49.1', source: 'Agent Canvas', keySource: '/home/p/.openhands/agent-canvas/api-key.txt',
    description: "the OpenHands agent-server 1.49.1 at http://127.0.0.1:8000 (Agent Canvas's local stack), with the session key from /home/p/.openhands/agent-canvas/api-key.txt" });
  assert.equal(words, "OpenHands: using the OpenHands agent-server 1.49.1 at http://127.0.0.1:8000 (Agent Canvas's local stack), with the session key from /home/p/.openhands/agent-canvas/api-key.txt.");
});

void test('servers: where the model came from is said with how to use another', () => {
  assert.equal(llmWords("the OpenHands CLI's settings (/h/.openhands/agent_settings.json)"),
    "OpenHands: the agent uses the model and key from the OpenHands CLI's settings (/h/.openhands/agent_settings.json). Set \"openhands.llm.model\" (and \"OpenHands: Set LLM API Key\") to use another.");
});

void test('servers: the question about another user\'s server names who runs it and what it would get', () => {
  const q = trustQuestion('http://127.0.0.1:8000', { uid: 65534, user: 'nobody', pid: 4242, program: '/usr/bin/python3', command: 'python3 -m openhands.agent_server',
    description: 'user nobody (uid 65534), process 4242 (python3 -m openhands.agent_server)' });
  assert.equal(q.message, 'An agent-server on 127.0.0.1:8000 is run by user nobody (uid 65534), process 4242 (python3 -m openhands.agent_server), not by you. Use it?');
  assert.match(q.detail, /Your keys, and this workspace's tools/);
});

void test('servers: an error\'s data gives its kind and the server\'s owner, and nothing else is trusted', () => {
  const owner = { uid: 65534, user: 'nobody', description: 'user nobody (uid 65534)' };
  assert.deepEqual(errorData({ message: 'x', data: { kind: 'server_not_trusted', serverUrl: 'http://127.0.0.1:8000', port: 8000, owner } }),
    { kind: 'server_not_trusted', serverUrl: 'http://127.0.0.1:8000', owner });
  assert.deepEqual(errorData({ data: { kind: 'mcp_token_exposed', owner: { uid: 'x' } } }), { kind: 'mcp_token_exposed' });
  assert.deepEqual(errorData(new Error('plain')), {});
  assert.deepEqual(errorData(null), {});
});
