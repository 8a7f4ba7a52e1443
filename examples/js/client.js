#!/usr/bin/env node
// A Gift of Tulips client in JavaScript, from PROTOCOL.md alone.
//
// It says hello, creates an open-box match against bots, starts it, and
// whenever it is prompted plays an action that scores the most points now
// (the prompt's `points`; at random among equals) — it knows no rules. At
// the end it prints the final scores, asks for the match's replay, and
// checks the seed commitment and the whole deal against it.
//
//     node client.js [ws://localhost:8765] [--seats 3] [--name JS]

import { STANDARD } from "./deal.js";
import { checkDeal, seedCommitment } from "./verify.js";
import { Connection } from "./wire.js";

const USAGE = "usage: node client.js [ws://host:port] [--seats 2-6] [--name NAME]";

/** The command line: the server's URL, the table size and the player's name. */
function parseArgs(argv) {
  const options = { url: "ws://localhost:8765", seats: 3, name: "JS" };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--seats") options.seats = Number(argv[++i]);
    else if (arg === "--name") options.name = argv[++i];
    else if (arg === "-h" || arg === "--help") return null;
    else if (/^wss?:\/\//.test(arg)) options.url = arg;
    else return null;
  }
  if (!Number.isInteger(options.seats) || options.seats < 2 || options.seats > 6) return null;
  if (!options.name) return null;
  return options;
}

/** The action that scores the most points now; at random among equals. */
function choose(prompt) {
  const { actions } = prompt;
  let points = prompt.points ?? [];
  if (points.length !== actions.length) points = actions.map(() => 0); // older servers
  const top = Math.max(...points);
  const best = actions.filter((_, i) => points[i] === top);
  return best[Math.floor(Math.random() * best.length)];
}

/** Print the final scoring (R20–R23). */
function printScores(scoring) {
  for (const player of scoring.players) {
    console.log(`seat ${player.seat}: ${player.total} points`);
  }
  console.log(`winners: ${JSON.stringify(scoring.winners)} (by ${scoring.decided_by})`);
}

/** Play one open-box match against bots, then verify it; resolves to true if all held. */
async function play({ url, seats, name }) {
  const connection = await Connection.open(url);
  connection.send("hello", { client: "tulips-js/0.1", name, features: ["batch"] });

  let match = null; // our match's id
  let seat = null; // ours
  let started = false;
  let commitment = null; // the seed commitment, as first published
  const changed = []; // any other commitment published for the match afterwards
  let scoring = null; // the final scoring, once the match is over
  let asked = false; // for the replay
  let ruleset = STANDARD;
  const events = [];
  let page = null; // the replay's published fields (seed, salt, actions…)

  for await (const msg of connection) {
    switch (msg.type) {
      case "error":
        if (msg.code === "decision_taken") break; // too late: the newer prompt is here already
        throw new Error(`error ${msg.code}: ${msg.message}`);
      case "welcome": {
        console.log(`connected to ${msg.server} as ${msg.name}`);
        const bots = [];
        for (let s = 1; s < seats; s++) bots.push({ seat: s, strength: "easy" });
        connection.send("create_match", { name: `${name} vs bots`, seats, bots, open_box: true });
        break;
      }
      case "joined":
        match = msg.match;
        seat = msg.seat;
        if (!started) {
          started = true;
          connection.send("start");
        }
        break;
      case "match_update": {
        // Published once the match is dealt (in the update that says it runs),
        // and never changed: the seed is fixed before a single move is made.
        if (msg.match.match !== match) break;
        const published = msg.match.seed_commitment;
        if (published && scoring === null) {
          if (commitment === null) console.log(`match ${match}: seat ${seat} of ${seats}, open box, seed commitment ${published}`);
          else if (published !== commitment) changed.push(published);
          commitment ??= published;
        }
        // Once it is finished (after match_ended), the replay publishes the seed.
        if (msg.match.status === "finished" && scoring !== null && !asked) {
          asked = true;
          connection.send("replay", { match });
        }
        break;
      }
      case "snapshot":
        if (msg.ruleset) ruleset = msg.ruleset; // the numbers the deal needs (R30)
        break;
      case "prompt":
        connection.send("act", { action: choose(msg), seq: msg.seq });
        break;
      case "event":
        if (msg.event.kind === "match_ended") {
          scoring = msg.event.scoring;
          printScores(scoring);
        }
        break;
      case "replay":
        page ??= msg;
        events.push(...msg.events);
        if (msg.next_seq != null) {
          connection.send("replay", { match, from_seq: msg.next_seq });
        } else {
          connection.close();
        }
        break;
      default: // ok, chat, turn_timer and any type this client does not know
    }
  }
  if (page === null) {
    const { code, reason } = connection.closed ?? {};
    throw new Error(`the connection closed (${code}${reason ? `: ${reason}` : ""}) before the match's replay came`);
  }
  return verify({ page, commitment, changed, seats, events, ruleset });
}

/** Check the commitment and the deal of the finished match; print what held. */
function verify({ page, commitment, changed, seats, events, ruleset }) {
  if (page.seed == null || page.salt == null) {
    console.error("NOT VERIFIED: the replay published no seed (is the server's match open-box?)");
    return false;
  }
  const seed = BigInt(page.seed); // a BigInt above 2**32 − 1 (useBigInt64), else a Number
  const problems = changed.map((c) => `seed commitment: the server published ${commitment}, then ${c}`);
  const computed = seedCommitment(page.salt, seed);
  if (commitment === null) {
    problems.push("seed commitment: the server published none while the match ran");
  } else if (computed === commitment) {
    console.log(`verified seed commitment: sha256(salt ‖ seed ${seed}) = ${computed}, as published at the start`);
  } else {
    problems.push(`seed commitment: sha256(salt ‖ seed) = ${computed}, the server published ${commitment}`);
  }
  const result = checkDeal({
    seed,
    players: seats,
    events,
    actions: page.actions ?? [],
    ruleset,
    firstSeat: page.first_seat ?? null,
  });
  for (const line of result.verified) console.log(`verified ${line}`);
  problems.push(...result.problems);
  for (const line of problems) console.error(`NOT VERIFIED: ${line}`);
  return problems.length === 0;
}

const options = parseArgs(process.argv.slice(2));
if (options === null) {
  console.error(USAGE);
  process.exit(2);
}
try {
  process.exitCode = (await play(options)) ? 0 : 1;
} catch (error) {
  console.error(`tulips-js: ${error.message}`);
  process.exitCode = 1;
}
