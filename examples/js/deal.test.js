// The deal (and the scores) against docs/deal-vectors.json, the test vectors of docs/DEAL.md
// that the project's Python engine writes: run with `node --test` here, or
// `node --test examples/js/` from the repository (make test does, through
// tests/examples/test_js_client.py).

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { PyRandom, deal, dealNumbers, freshDeck, play, reveal, seedKey } from "./deal.js";
import { score } from "./score.js";

const VECTORS = new URL("../../docs/deal-vectors.json", import.meta.url);
const missing = existsSync(VECTORS) ? false : `${VECTORS.pathname} is missing (docs/DEAL.md's vectors are not merged yet)`;
const vectors = missing ? { cases: [], decks: {}, rulesets: {} } : JSON.parse(readFileSync(VECTORS, "utf8"));

const name = (c) => `seed ${c.seed}, ${c.players} players, ${c.ruleset}${c.host_first_seat == null ? "" : `, host picks seat ${c.host_first_seat}`}`;

test("the vectors file is there, in the format this client reads", { skip: missing }, () => {
  assert.equal(vectors.format, 1);
  assert.ok(vectors.cases.length > 0);
});

test("the unshuffled decks (step 1)", { skip: missing }, () => {
  for (const [ruleset, byPlayers] of Object.entries(vectors.decks)) {
    for (const [players, deck] of Object.entries(byPlayers)) {
      const { copies } = dealNumbers(vectors.rulesets[ruleset], Number(players));
      assert.deepEqual(freshDeck(copies), deck, `${ruleset}, ${players} players`);
    }
  }
});

for (const c of vectors.cases) {
  test(name(c), () => {
    const seed = BigInt(c.seed); // a decimal string: it may exceed 2**53
    assert.deepEqual(seedKey(seed), c.key, "key");
    const rng = new PyRandom(seed);
    assert.deepEqual(c.outputs.map(() => rng.nextUint32()), c.outputs, "outputs");

    const ruleset = vectors.rulesets[c.ruleset];
    const dealt = deal(seed, c.players, ruleset, c.host_first_seat);
    for (const field of ["shuffled", "removed", "turned", "festival", "ranking", "reshuffled", "hands"]) {
      assert.deepEqual(dealt[field], c[field], field);
    }
    assert.equal(dealt.chanceSeat, c.chance_seat, "chance_seat");
    assert.equal(dealt.firstSeat, c.first_seat, "first_seat");

    const played = play(dealt, c.play.actions, c.players);
    assert.ok(played.over, "the actions play the deck out");
    assert.deepEqual(played.pile, c.play.secret_pile, "secret_pile");
    const { shuffledPile, revealed } = reveal(dealt.rng, played.pile, dealt.revealSize);
    assert.deepEqual(shuffledPile, c.play.shuffled_pile, "shuffled_pile");
    assert.deepEqual(revealed, c.play.revealed, "revealed");

    const scored = score(dealt, c.play.actions, c.players, ruleset, revealed);
    assert.deepEqual(scored.ranking, c.play.ranking, "ranking after the reveal");
    assert.deepEqual(scored.totals, c.play.totals, "totals");
    assert.deepEqual(scored.winners, c.play.winners, "winners");
  });
}
