// Unit tests of the words around finding and starting an agent-server
// (serverWords.ts): the question before a start shows the exact command, and
// the words after name the server and where its key came from, never a key.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { foundWords, llmWords, startQuestion } from '../src/serverWords';

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
