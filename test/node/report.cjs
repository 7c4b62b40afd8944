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

module.exports = { check, finish, sleep };
