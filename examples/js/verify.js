// Checking a finished open-box match (PROTOCOL.md "Checking a finished
// match"): the seed commitment the server published before the deal, and
// the deal itself, rebuilt from the published seed and compared with every
// event the replay shows.

import { createHash } from "node:crypto";

import { STANDARD, colourOf, deal, play, reveal } from "./deal.js";
import { score } from "./score.js";

/**
 * The seed commitment of `saltHex` (64 hex digits) and `seed` (a BigInt or a
 * safe integer): SHA-256 of the 32-byte salt then the seed as an unsigned
 * 64-bit big-endian integer, as lowercase hex.
 */
export function seedCommitment(saltHex, seed) {
  const salt = Buffer.from(saltHex, "hex");
  if (salt.length !== 32 || salt.toString("hex") !== saltHex.toLowerCase()) {
    throw new Error(`the salt must be 64 hex digits, got ${JSON.stringify(saltHex)}`);
  }
  const seedBytes = Buffer.alloc(8);
  seedBytes.writeBigUInt64BE(BigInt(seed));
  return createHash("sha256").update(salt).update(seedBytes).digest("hex");
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const list = (cards) => cards.join(", ");

// The action each placing event shows, spelt for comparing.
const SHOWN = {
  card_kept: () => "keep",
  card_given: (event) => `give ${event.to_seat}`,
  card_added_face_up: () => "add_face_up",
  card_added_secret: () => "add_secret",
};

/**
 * Deal a finished open-box match again from its published seed, play its
 * published actions for the draws (docs/DEAL.md steps 1–10), and check the
 * replay's events against both (DEAL.md "Checking an open-box match").
 *
 * `events` are every replay page's, in order, as one seat saw them (so that
 * seat's dealt cards and draws are shown); `actions` the published
 * {seat, action} list; `ruleset` the match's numbers (a RulesetInfo);
 * `firstSeat` the host's pick (null: chance chose).
 *
 * Returns { verified, problems }: a line for each thing that matched, and one
 * for each that did not (an honest server's match has none), each starting
 * with what it is about: "deal: …" or "scores: …".
 */
export function checkDeal({ seed, players, events, actions, ruleset = STANDARD, firstSeat = null }) {
  const verified = [];
  const problems = [];
  // Each line says what it is about: "deal: …" or "scores: …".
  const on = (topic) => (ok, good, bad) => (ok ? verified : problems).push(`${topic}: ${ok ? good : bad}`);
  const expect = on("deal");
  const fail = (line) => expect(false, "", line);

  const dealt = deal(BigInt(seed), players, ruleset, firstSeat ?? null);
  let played;
  try {
    played = play(dealt, actions, players);
  } catch (error) {
    fail(`the published actions do not play out on the seed's deal: ${error.message}`);
    return { verified, problems };
  }
  const { revealed } = reveal(dealt.rng, played.pile, dealt.revealSize);
  const byRank = dealt.ranking[0] === colourOf(dealt.festival[0]) ? dealt.festival : [...dealt.festival].reverse();

  let draws = 0; // card_drawn events so far
  let seen = 0; // draws whose card an event showed
  let drawMismatches = 0;
  const moves = []; // the turn actions the events show, in order
  const scoredAtOnce = []; // the points each of them scored (0 for an add)
  let ranking = null; // the festival's ranking, as the last event to change it says
  let scoring = null; // match_ended's
  const turnedUp = []; // the secret_revealed cards
  let ended = false;
  let lastShown = null; // the card the last card_drawn showed, if it showed one

  for (const event of events) {
    const draw = played.draws[draws - 1]; // the draw a placing event resolves
    switch (event.kind) {
      case "festival_started":
        expect(
          same(event.cards, byRank) && same(event.ranking, dealt.ranking),
          `starting festival ${list(event.cards)}, as the seed turns them over (R10)`,
          `starting festival: the replay has ${list(event.cards)}, the seed gives ${list(byRank)}`,
        );
        expect(
          event.first_seat === dealt.firstSeat,
          `first seat ${event.first_seat}, ${firstSeat == null ? "the seed's draw (R12)" : "the host's pick"}`,
          `first seat: the replay has ${event.first_seat}, the seed gives ${dealt.firstSeat}`,
        );
        break;
      case "cards_dealt":
        if (event.cards != null) {
          expect(
            same(event.cards, dealt.hands[event.seat]),
            `seat ${event.seat}'s own dealt cards ${list(event.cards)} (R11)`,
            `seat ${event.seat}'s dealt cards: the replay has ${list(event.cards)}, the seed gives ${list(dealt.hands[event.seat])}`,
          );
        }
        break;
      case "opening_revealed": {
        const bouquets = dealt.hands.map((hand, s) => {
          const secret = played.pile[s].card;
          return hand[0] === secret ? hand[1] : hand[0];
        });
        expect(
          same(event.bouquets, bouquets),
          `the opening: every seat kept the dealt card its published choice leaves (R11)`,
          `opening: the replay shows bouquets ${list(event.bouquets)}, the seed and the choices give ${list(bouquets)}`,
        );
        break;
      }
      case "card_drawn": {
        const next = played.draws[draws++];
        lastShown = event.card ?? null;
        const ok =
          next !== undefined &&
          next.seat === event.seat &&
          next.left === event.deck_count &&
          (event.card == null || event.card === next.card);
        if (!ok && drawMismatches++ === 0) {
          const want = next ? `seat ${next.seat}, ${next.card}, ${next.left} left` : "no draw";
          fail(`draw ${draws}: the replay has seat ${event.seat}, ${event.card ?? "unseen"}, ${event.deck_count} left; the seed gives ${want}`);
        }
        break;
      }
      case "card_kept":
      case "card_given":
      case "card_added_face_up":
      case "card_added_secret":
        moves.push(`${event.seat} ${SHOWN[event.kind](event)}`);
        scoredAtOnce.push(event.points ?? 0);
        if (event.kind === "card_added_face_up") ranking = event.ranking;
        if (event.card != null || lastShown != null) seen++;
        if (event.card != null && draw !== undefined && event.card !== draw.card && drawMismatches++ === 0) {
          fail(`draw ${draws}: ${event.kind} shows ${event.card}, the seed's deck has ${draw.card}`);
        }
        break;
      case "secret_revealed":
        turnedUp.push(event.card);
        ranking = event.ranking;
        break;
      case "match_ended":
        ended = true;
        scoring = event.scoring;
        break;
      default: // a kind this client does not know: PROTOCOL.md says ignore it
    }
  }

  const turns = actions
    .slice(players)
    .map(({ seat, action }) => `${seat} ${action.kind === "give" ? `give ${action.to_seat}` : action.kind}`);
  expect(
    same(turns, moves),
    `the ${actions.length} published actions are the moves the events show`,
    `the published actions are not the moves the events show (${turns.length} turn actions, ${moves.length} moves)`,
  );
  if (drawMismatches === 0) {
    expect(
      draws === played.draws.length,
      `all ${draws} draws are the seed's deck in order: ${seen} cards seen, the other ${draws - seen} (other seats' secret cards) by seat and count`,
      `the replay has ${draws} draws, the seed and the actions give ${played.draws.length}`,
    );
  }
  if (ended) {
    expect(
      played.over && same(turnedUp, revealed),
      `the reveal ${list(turnedUp)}: the seed's generator turns up those ${revealed.length} of the ${played.pile.length} secret cards (R19)`,
      `reveal: the replay turns up ${list(turnedUp)}, the seed gives ${list(revealed)}`,
    );
    checkScores(on("scores"), score(dealt, actions, players, ruleset, revealed), scoredAtOnce, ranking, scoring);
  } else {
    fail("the replay has no match_ended event: is the match finished?");
  }
  return { verified, problems };
}

/**
 * The points the events say each move scored, the ranking after the reveal
 * and match_ended's scoring, against what the seed and actions give (score.js).
 */
function checkScores(expect, scored, scoredAtOnce, ranking, scoring) {
  const wrong = scored.moves.findIndex((points, i) => points !== scoredAtOnce[i]);
  expect(
    wrong < 0 && scoredAtOnce.length === scored.moves.length,
    `every KEEP and GIVE scored what the ranking of the moment gives (R14, R15)`,
    `move ${wrong + 1} scored ${scoredAtOnce[wrong]} by the events, ${scored.moves[wrong]} by the rules`,
  );
  expect(
    same(ranking, scored.ranking),
    `the final ranking ${(ranking ?? []).join(", ")} (R8)`,
    `final ranking: the replay has ${(ranking ?? []).join(", ")}, the rules give ${scored.ranking.join(", ")}`,
  );
  const totals = scoring?.players?.map((p) => p.total) ?? [];
  expect(
    same(totals, scored.totals) && same(scoring?.winners, scored.winners),
    `the final scores ${totals.join(", ")} and winners ${JSON.stringify(scored.winners)} (R20–R23)`,
    `final scores: the replay has ${totals.join(", ")} (winners ${JSON.stringify(scoring?.winners)}), the rules give ${scored.totals.join(", ")} (winners ${JSON.stringify(scored.winners)})`,
  );
}
