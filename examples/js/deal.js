// The shuffle and the deal of a Gift of Tulips match, from its 64-bit seed.
//
// The server deals with Python's random.Random(seed) (a Mersenne Twister,
// MT19937) and the draws of its shuffle; this module does the same steps,
// in the same order, so that an open-box match's published seed gives the
// same deck, removed cards, starting festival, hands and first seat here as
// on the server. docs/DEAL.md describes these steps language-neutrally; the
// step numbers below are its own.
// Nothing here knows the network: deal() takes numbers and returns cards.

const N = 624;
const M = 397;

/** The four colours in their canonical order (RULES.md R1). */
export const COLOURS = ["purple", "blue", "pink", "orange"];

/** The three card values (R2). */
export const VALUES = [2, 3, 4];

/** The printed rules' numbers that the deal needs (R3, R4, R19), as RulesetInfo spells them. */
export const STANDARD = {
  copies: 6,
  extra_copies: 2,
  extra_from_players: 5,
  removed: [18, 4, 6, 14, 10], // for 2, 3, 4, 5, 6 players
  reveal_size: 5,
};

/**
 * The seed's key for init_by_array: its 32-bit words, least significant
 * first, as many as it needs and at least one (0 → [0], 2**32 → [0, 1]).
 */
export function seedKey(seed) {
  let n = BigInt(seed);
  if (n < 0n) n = -n; // Python seeds with abs(seed)
  const key = [];
  do {
    key.push(Number(n & 0xffffffffn));
    n >>= 32n;
  } while (n > 0n);
  return key;
}

/**
 * A Mersenne Twister seeded as CPython's random.Random(seed) seeds it, for an
 * integer seed (a BigInt or a safe Number, 0 or more): init_by_array with the
 * seed's 32-bit words, least significant first (one word [0] for seed 0).
 */
export class PyRandom {
  /** Seed the generator; `seed` is a BigInt or a non-negative safe integer. */
  constructor(seed) {
    const key = seedKey(seed);
    this.mt = new Uint32Array(N);
    this.index = N;
    this.#initByArray(key);
  }

  #initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  #initByArray(key) {
    const mt = this.mt;
    this.#initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000; // MSB is 1, assuring a non-zero initial array
  }

  #twist() {
    const mt = this.mt;
    for (let kk = 0; kk < N; kk++) {
      const y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7fffffff);
      mt[kk] = mt[(kk + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.index = 0;
  }

  /** The next 32-bit output, 0 to 2**32 − 1 (MT19937's genrand_uint32). */
  nextUint32() {
    if (this.index >= N) this.#twist();
    let y = this.mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** Python's getrandbits(k) for 0 ≤ k ≤ 32: the top k bits of one output. */
  getrandbits(k) {
    if (k < 0 || k > 32) throw new RangeError(`getrandbits(${k}): only 0 to 32 bits`);
    if (k === 0) return 0;
    return this.nextUint32() >>> (32 - k);
  }
}

/** How many bits write `n` (Python's int.bit_length), for 0 ≤ n < 2**32. */
export function bitLength(n) {
  return n === 0 ? 0 : 32 - Math.clz32(n);
}

/**
 * A uniform integer in [0, n), n ≥ 1, drawn as Python's randrange(n) draws it:
 * getrandbits(bit_length(n)) again and again until the draw is below n.
 */
export function randbelow(rng, n) {
  const bits = bitLength(n);
  let r = rng.getrandbits(bits);
  while (r >= n) r = rng.getrandbits(bits);
  return r;
}

/**
 * Shuffle `items` in place as Python's random.shuffle does: for i from the
 * last index down to 1, swap items[i] with items[randbelow(i + 1)].
 */
export function shuffle(rng, items) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randbelow(rng, i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** A card's colour, from its spelling ("pink-3" → "pink"). */
export function colourOf(card) {
  return card.slice(0, card.indexOf("-"));
}

/** A card's value, from its spelling ("pink-3" → 3). */
export function valueOf(card) {
  return Number(card.slice(card.indexOf("-") + 1));
}

/**
 * The numbers of a ruleset that the deal needs (R30), from either layout: the
 * wire's RulesetInfo (`copies`, `removed` as a list for 2 to 6 players) or a
 * ruleset file's (`deck.copies`, `removed` by player count), as in
 * docs/deal-vectors.json.
 */
export function dealNumbers(ruleset, players) {
  if (!Number.isInteger(players) || players < 2 || players > 6) {
    throw new RangeError(`2 to 6 players, not ${players}`);
  }
  const deck = ruleset.deck ?? ruleset;
  const removed = Array.isArray(ruleset.removed)
    ? ruleset.removed[players - 2]
    : ruleset.removed[String(players)];
  return {
    copies: deck.copies + (players >= deck.extra_from_players ? deck.extra_copies : 0),
    removed,
    revealSize: ruleset.reveal_size,
  };
}

/**
 * The unshuffled deck (R3, DEAL.md step 1): each of the twelve cards in
 * colour order, then value order, `copies` times in a row ("purple-2", …,
 * "orange-4"). Like every deck here, its top is its last card.
 */
export function freshDeck(copies) {
  const deck = [];
  for (const colour of COLOURS) {
    for (const value of VALUES) {
      for (let c = 0; c < copies; c++) deck.push(`${colour}-${value}`);
    }
  }
  return deck;
}

/**
 * Deal a match as the server does (DEAL.md steps 1–6: R3, R4, R10–R12), from
 * its seed (a BigInt, or a safe integer), the player count, the ruleset and
 * the host's pick of first seat (null: chance decides).
 *
 * Returns every step's result, named as in docs/deal-vectors.json, and the
 * generator where the deal left it (the reveal, step 9, draws from it next):
 *   shuffled    the deck after step 2's shuffle (index 0 first, top last)
 *   removed     the cards removed unseen (R4), in the order taken
 *   turned      the cards turned over and put back on the way to the festival
 *   festival    the two festival cards in the order turned over (R10)
 *   ranking     their colours, 1st first
 *   reshuffled  the deck after step 4's second shuffle
 *   hands       per seat, the two cards dealt (R11), the first taken first
 *   chanceSeat  step 6's draw (R12), made even when the host picks
 *   firstSeat   who plays first: the host's pick if any, else chanceSeat
 *   deck        the cards left to draw (top last: drawn first)
 *   revealSize  the ruleset's reveal size (R19)
 *   rng         the generator
 */
export function deal(seed, players, ruleset = STANDARD, hostFirstSeat = null) {
  const numbers = dealNumbers(ruleset, players);
  const rng = new PyRandom(seed);
  const deck = freshDeck(numbers.copies);
  shuffle(rng, deck);
  const shuffled = [...deck];
  const removed = [];
  for (let i = 0; i < numbers.removed; i++) removed.push(deck.pop());
  const first = deck.pop();
  let second = deck.pop();
  const turned = [];
  while (colourOf(second) === colourOf(first)) {
    turned.push(second);
    second = deck.pop();
  }
  deck.push(...turned);
  shuffle(rng, deck); // even when nothing was turned
  const reshuffled = [...deck];
  const hands = [];
  for (let seat = 0; seat < players; seat++) hands.push([deck.pop(), deck.pop()]);
  const chanceSeat = randbelow(rng, players);
  const festival = [first, second];
  const byRank = valueOf(second) > valueOf(first) ? [second, first] : [first, second];
  return {
    shuffled,
    removed,
    turned,
    festival,
    ranking: byRank.map(colourOf),
    reshuffled,
    hands,
    chanceSeat,
    firstSeat: hostFirstSeat ?? chanceSeat,
    deck,
    revealSize: numbers.revealSize,
    rng,
  };
}

/**
 * Play a dealt match's accepted actions (DEAL.md steps 7–8), as `replay`
 * lists them ({seat, action}), for what chance decided: every draw, in order
 * ({seat, card, left}: the seat that drew, the card, the cards left after it),
 * and the secret pile (R9) in the order placed ({seat, card}): the opening
 * cards by seat, then each card added face down. Throws if an action is not
 * the active seat's or the deck runs out first.
 */
export function play(dealt, actions, players) {
  const deck = [...dealt.deck];
  const openings = new Map();
  const rest = [];
  for (const entry of actions) {
    if (entry.action.kind === "opening" && !rest.length) openings.set(entry.seat, entry.action.secret);
    else rest.push(entry);
  }
  const pile = [];
  for (let seat = 0; seat < players; seat++) {
    if (!openings.has(seat)) throw new Error(`seat ${seat} made no opening choice`);
    pile.push({ seat, card: openings.get(seat) });
  }
  const draws = [];
  const draw = (seat) => {
    const card = deck.pop();
    draws.push({ seat, card, left: deck.length });
    return card;
  };
  let active = dealt.firstSeat;
  let drawn = draw(active);
  let firstOfTurn = true;
  for (const [i, { seat, action }] of rest.entries()) {
    if (drawn === undefined) throw new Error(`action ${players + i + 1}: the deck ran out before it`);
    if (seat !== active) throw new Error(`action ${players + i + 1}: seat ${seat} acted in seat ${active}'s turn`);
    if (action.kind === "add_secret") pile.push({ seat, card: drawn });
    if (firstOfTurn && deck.length) {
      drawn = draw(active);
      firstOfTurn = false;
    } else if (deck.length) {
      active = (active + 1) % players;
      drawn = draw(active);
      firstOfTurn = true;
    } else {
      drawn = undefined; // R18: the game is over
    }
  }
  return { draws, pile, over: drawn === undefined };
}

/**
 * The end-of-match reveal (R19, DEAL.md steps 9–10): shuffle the secret pile
 * with the generator the deal left, and turn up its first `revealSize`
 * entries. Returns { shuffledPile, revealed } (revealed: cards, in order).
 */
export function reveal(rng, pile, revealSize) {
  const shuffledPile = shuffle(rng, [...pile]);
  return { shuffledPile, revealed: shuffledPile.slice(0, revealSize).map((e) => e.card) };
}
