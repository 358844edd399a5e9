// The steps of the page's browser tests, as TAP: "ok N - what" or
// "not ok N - what: why" per step, then "# pass N" / "# fail N"; the Go
// tests that run them read that summary. Shared by browser.mjs and
// hosts.mjs.

/** An environment variable the Go test sets, or d, or an error naming it. */
export const need = (k, d) => process.env[k] || d || (() => { throw new Error(`${k} is not set`); })();

const tally = { n: 0, pass: 0, fail: 0 };

/** Runs one step; a failed one is printed and thrown, ending the run. */
export async function step(what, fn) {
  tally.n++;
  try {
    await fn();
    tally.pass++;
    console.log(`ok ${tally.n} - ${what}`);
  } catch (e) {
    tally.fail++;
    console.log(`not ok ${tally.n} - ${what}: ${(e && e.message || String(e)).split('\n').slice(0, 6).join(' | ')}`);
    throw e;
  }
}

/** Counts an error outside any step (the set-up) as a failure. */
export function setupFailed(e) {
  if (tally.n === tally.pass + tally.fail && tally.fail === 0) {
    tally.fail++;
    console.log(`not ok ${tally.n + 1} - setup: ${e.message}`);
  }
}

/** Prints the summary and exits, non-zero on any failure. */
export function finish() {
  console.log(`# pass ${tally.pass}`);
  console.log(`# fail ${tally.fail}`);
  process.exit(tally.fail ? 1 : 0);
}
