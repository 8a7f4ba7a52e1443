// The checks of verify.js pass an honest replay and catch a tampered one.
// The honest replays are built from docs/deal-vectors.json (what the Python
// engine dealt and played), as seat 0 would have seen them; only the points
// of each move, which the vectors do not list, come from score.js (whose
// totals deal.test.js holds to the vectors). The commitment has a known
// answer worked out with Python's hashlib.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { deal } from "./deal.js";
import { score } from "./score.js";
import { checkDeal, seedCommitment } from "./verify.js";

const VECTORS = new URL("../../docs/deal-vectors.json", import.meta.url);
const missing = existsSync(VECTORS) ? false : `${VECTORS.pathname} is missing (docs/DEAL.md's vectors are not merged yet)`;
const vectors = missing ? null : JSON.parse(readFileSync(VECTORS, "utf8"));

const SALT = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString("hex");

test("the seed commitment: SHA-256 of the salt then the seed as 8 bytes big-endian", () => {
  // hashlib.sha256(bytes(range(32)) + (2**53 + 1).to_bytes(8, "big")).hexdigest()
  const known = "f8a7e4355771c917cca3b19513067ed453fc2ea2f0ed7ad9853b8c51f3a833d5";
  assert.equal(seedCommitment(SALT, 9007199254740993n), known);
  // The same seed read as a float 64 is 2**53: another commitment.
  assert.notEqual(seedCommitment(SALT, 2 ** 53 + 1), known);
  assert.throws(() => seedCommitment("abc", 1n), /64 hex digits/);
});

/**
 * The replay of a vector's match as seat 0 saw it: events in the order the
 * server sends them, built from the vector's fields (docs/DEAL.md steps 7–8),
 * not from deal.js; only each move's points, which the vectors leave out,
 * come from score.js.
 */
function replayOf(vector) {
  const c = structuredClone(vector); // a tamper must not change the vectors
  const players = c.players;
  const own = (seat, card) => (seat === 0 ? card : null);
  const byRank = c.ranking[0] === c.festival[0].split("-")[0] ? c.festival : [c.festival[1], c.festival[0]];
  const events = [{ kind: "festival_started", cards: byRank, ranking: c.ranking, first_seat: c.first_seat }];
  c.hands.forEach((hand, seat) => events.push({ kind: "cards_dealt", seat, cards: own(seat, hand) }));
  const openings = c.play.actions.slice(0, players);
  const secretOf = (seat) => openings.find((a) => a.seat === seat).action.secret;
  const bouquets = c.hands.map((hand, seat) => (hand[0] === secretOf(seat) ? hand[1] : hand[0]));
  events.push({ kind: "opening_revealed", bouquets, secret_count: players });
  const deck = c.reshuffled.slice(0, c.reshuffled.length - 2 * players);
  let secretCount = players;
  let active = c.first_seat;
  let firstOfTurn = true;
  let turn = 1;
  const ruleset = vectors.rulesets[c.ruleset];
  const dealt = deal(BigInt(c.seed), players, ruleset, c.host_first_seat);
  const points = score(dealt, c.play.actions, players, ruleset, c.play.revealed).moves;
  events.push({ kind: "turn_started", seat: active, turn });
  let drawn = deck.pop();
  events.push({ kind: "card_drawn", seat: active, card: own(active, drawn), deck_count: deck.length });
  for (const [i, { seat, action }] of c.play.actions.slice(players).entries()) {
    if (action.kind === "keep") events.push({ kind: "card_kept", seat, card: drawn, points: points[i] });
    if (action.kind === "give") {
      events.push({ kind: "card_given", seat, to_seat: action.to_seat, card: drawn, points: points[i] });
    }
    if (action.kind === "add_face_up") events.push({ kind: "card_added_face_up", seat, card: drawn, ranking: [] });
    if (action.kind === "add_secret") {
      events.push({ kind: "card_added_secret", seat, card: own(seat, drawn), secret_count: ++secretCount });
    }
    if (!deck.length) break;
    if (!firstOfTurn) {
      active = (active + 1) % players;
      events.push({ kind: "turn_started", seat: active, turn: ++turn });
    }
    firstOfTurn = !firstOfTurn;
    drawn = deck.pop();
    events.push({ kind: "card_drawn", seat: active, card: own(active, drawn), deck_count: deck.length });
  }
  for (const card of c.play.revealed) events.push({ kind: "secret_revealed", card, ranking: [] });
  events.at(-1).ranking = c.play.ranking; // the vectors give the ranking after the reveal
  const scores = c.play.totals.map((total, seat) => ({ seat, total }));
  events.push({ kind: "match_ended", scoring: { players: scores, winners: c.play.winners } });
  return {
    seed: BigInt(c.seed),
    players,
    events,
    actions: c.play.actions,
    ruleset: vectors.rulesets[c.ruleset],
    firstSeat: c.host_first_seat,
  };
}

const cases = vectors ? vectors.cases : [];

test("an honest replay of every vector's match verifies", { skip: missing }, () => {
  for (const c of cases) {
    const { verified, problems } = checkDeal(replayOf(c));
    assert.deepEqual(problems, [], `seed ${c.seed}, ${c.players} players`);
    assert.ok(verified.some((line) => line.startsWith("deal: the reveal ")));
  }
});

/** The problems checkDeal finds in a vector's replay after `tamper` changed it. */
function problemsAfter(tamper) {
  const replay = replayOf(cases.find((c) => c.players === 3 && c.ruleset === "standard"));
  tamper(replay);
  return checkDeal(replay).problems.join("\n");
}

test("a tampered replay does not verify", { skip: missing }, () => {
  assert.match(problemsAfter((r) => r.events[0].cards.reverse()), /starting festival/);
  assert.match(problemsAfter((r) => (r.events[0].first_seat = (r.events[0].first_seat + 1) % 3)), /first seat/);
  assert.match(
    problemsAfter((r) => (r.events.find((e) => e.kind === "cards_dealt").cards = ["pink-2", "pink-2"])),
    /seat 0's dealt cards/,
  );
  assert.match(
    problemsAfter((r) => {
      const kept = r.events.find((e) => e.kind === "card_kept" || e.kind === "card_given");
      kept.card = kept.card === "blue-2" ? "blue-3" : "blue-2";
    }),
    /draw \d+/,
  );
  assert.match(
    problemsAfter((r) => {
      const shown = r.events.find((e) => e.kind === "secret_revealed");
      shown.card = shown.card === "blue-2" ? "blue-3" : "blue-2";
    }),
    /reveal/,
  );
  assert.notEqual(problemsAfter((r) => (r.seed += 1n)), "");
  assert.match(
    problemsAfter((r) => (r.events.find((e) => e.kind === "card_given").points += 1)),
    /move \d+ scored/,
  );
  assert.match(
    problemsAfter((r) => (r.events.at(-1).scoring.players[0].total += 1)),
    /final scores/,
  );
  assert.match(
    problemsAfter((r) => r.events.filter((e) => e.kind === "secret_revealed").at(-1).ranking.reverse()),
    /final ranking/,
  );
  assert.match(
    problemsAfter((r) => r.actions.splice(r.players, 1)),
    /published actions/,
  );
});
