// The scores of a dealt and played match (docs/DEAL.md section 6: R7, R8,
// R14, R15, R20–R23), so that a checker can hold the server's final scoring
// to the seed and the actions too. Only the verifier uses this: the client
// plays by the prompts' points and knows no rules.

import { colourOf, valueOf } from "./deal.js";

const UNRANKED = 3; // the rank an unranked colour scores as (R7)

/**
 * The scoring numbers of a ruleset (R30), from either layout: the wire's
 * RulesetInfo (`giving_bonus`, `majority_places` as a list for 2 to 6
 * players) or a ruleset file's (`points.giving_bonus`, `majority_places` by
 * player count), as in docs/deal-vectors.json.
 */
export function scoreNumbers(ruleset, players) {
  const points = ruleset.points ?? ruleset;
  const places = ruleset.majority_places;
  return {
    givingBonus: points.giving_bonus,
    bouquet: points.bouquet,
    majority: points.majority,
    places: Array.isArray(places) ? places[players - 2] : places[String(players)],
  };
}

/**
 * R8: add a card face up to the festival. Its colour's total rises; it
 * joins the ranking at the bottom if unranked, then climbs past every colour
 * just above it whose total is not higher. Changes `totals` and `ranking`.
 */
export function addFaceUp(totals, ranking, card) {
  const colour = colourOf(card);
  totals[colour] = (totals[colour] ?? 0) + valueOf(card);
  let i = ranking.indexOf(colour);
  if (i < 0) i = ranking.push(colour) - 1;
  while (i > 0 && totals[ranking[i - 1]] <= totals[colour]) {
    ranking[i] = ranking[i - 1];
    i--;
  }
  ranking[i] = colour;
}

/**
 * R20–R22: one ranked colour's majority points, by seat. Seats with a card
 * of the colour are sorted by how many, then by their total value; equal
 * seats share a place; places from `places` on score nothing.
 */
export function majorityPoints(bouquets, colour, points, places) {
  const standings = [];
  bouquets.forEach((bouquet, seat) => {
    const cards = bouquet.filter((card) => colourOf(card) === colour);
    const value = cards.reduce((sum, card) => sum + valueOf(card), 0);
    if (cards.length) standings.push({ seat, cards: cards.length, value });
  });
  standings.sort((a, b) => b.cards - a.cards || b.value - a.value || a.seat - b.seat);
  const won = bouquets.map(() => 0);
  let place = -1;
  let last = null;
  for (const standing of standings) {
    if (!last || standing.cards !== last.cards || standing.value !== last.value) {
      place++;
      last = standing;
    }
    if (place >= places) break;
    won[standing.seat] += points[place];
  }
  return won;
}

/**
 * Score a match from its deal (deal.js `deal`), its published actions and the
 * cards the reveal turned up: the points each turn action scored at once, in
 * order, the final ranking, each seat's total and bouquet size (tulips), and
 * the winners (R23: most points, then most tulips, else shared).
 */
export function score(dealt, actions, players, ruleset, revealed) {
  const numbers = scoreNumbers(ruleset, players);
  const colourTotals = {}; // the festival's, by colour (R6)
  const ranking = [...dealt.ranking]; // step 4 set it (R10)
  for (const card of dealt.festival) colourTotals[colourOf(card)] = valueOf(card);
  const rank = (card) => (ranking.includes(colourOf(card)) ? ranking.indexOf(colourOf(card)) : UNRANKED);

  const bouquets = dealt.hands.map(() => []);
  const keeping = bouquets.map(() => 0);
  const giving = bouquets.map(() => 0);
  const openings = actions.slice(0, players);
  for (const { seat, action } of openings) {
    const hand = dealt.hands[seat];
    bouquets[seat].push(hand[0] === action.secret ? hand[1] : hand[0]); // R11
  }
  const deck = [...dealt.deck];
  const moves = [];
  for (const { seat, action } of actions.slice(players)) {
    const card = deck.pop(); // each turn action places the card drawn before it
    let points = 0;
    if (action.kind === "keep") {
      points = numbers.bouquet[rank(card)]; // R14
      keeping[seat] += points;
      bouquets[seat].push(card);
    } else if (action.kind === "give") {
      points = numbers.givingBonus[rank(card)] + valueOf(card); // R15
      giving[seat] += points;
      bouquets[action.to_seat].push(card);
    } else if (action.kind === "add_face_up") {
      addFaceUp(colourTotals, ranking, card); // R16
    }
    moves.push(points);
  }
  for (const card of revealed) addFaceUp(colourTotals, ranking, card); // R19

  const points = bouquets.map((_, seat) => keeping[seat] + giving[seat]);
  ranking.slice(0, numbers.majority.length).forEach((colour, r) => {
    majorityPoints(bouquets, colour, numbers.majority[r], numbers.places).forEach((won, seat) => {
      points[seat] += won;
    });
  });
  const tulips = bouquets.map((bouquet) => bouquet.length);
  const best = Math.max(...points);
  let winners = points.flatMap((total, seat) => (total === best ? [seat] : []));
  if (winners.length > 1) {
    const most = Math.max(...winners.map((seat) => tulips[seat]));
    winners = winners.filter((seat) => tulips[seat] === most);
  }
  return { moves, ranking, totals: points, tulips, winners };
}
