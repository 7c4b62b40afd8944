// The checks of the test clients here, and the line the Go test reads at
// the end ("N passed, M failed"; cmd/oh-bridge's runClient).
'use strict';

let passed = 0;
let failed = 0;

// check records one check and prints it, with what was seen when it failed.
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail === undefined ? '' : `\n     ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
  }
}

// finish prints the tally and exits: 1 if any check failed.
function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// until polls cond every 50 ms for up to seconds (30 by default) and
// returns its first truthy value; past that it throws, naming what.
async function until(what, cond, seconds = 30) {
  for (let i = 0; i < seconds * 20; i++) {
    const v = await cond();
    if (v) return v;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// executionStatus is an agent-server event's execution status, if it
// carries one (a state update of that key, or a full state).
const executionStatus = (e) => {
  if (e.kind !== 'ConversationStateUpdateEvent') return undefined;
  if (e.key === 'execution_status') return e.value;
  if (e.key === 'full_state') return e.value.execution_status;
  return undefined;
};

module.exports = { check, finish, sleep, until, executionStatus };
