// The encoding rules PROTOCOL.md sets a JavaScript client: a uint 64 (the
// open-box seed) must decode to the exact integer, and request ids must go
// out as MessagePack integers. Skips while `npm ci` has not installed the
// MessagePack library.

import assert from "node:assert/strict";
import { test } from "node:test";

let wire = null;
let missing = false;
try {
  wire = await import("./wire.js");
} catch (error) {
  missing = `run npm ci in examples/js first (${error.code ?? error.message})`;
}

const str = (s) => [0xa0 | s.length, ...Buffer.from(s)]; // a fixstr

test("a uint 64 seed decodes as the exact BigInt; small integers stay Numbers", { skip: missing }, () => {
  const seed = 2n ** 53n + 1n; // a float 64 would round it to 2**53
  const uint64 = Buffer.alloc(8);
  uint64.writeBigUInt64BE(seed);
  // {"seed": 2**53 + 1, "id": 7}, written byte by byte from the MessagePack spec
  const frame = Uint8Array.from([0x82, ...str("seed"), 0xcf, ...uint64, ...str("id"), 0x07]);
  const message = wire.decodeFrame(frame);
  assert.equal(message.seed, seed);
  assert.equal(message.id, 7);
  assert.equal(typeof message.id, "number");
});

test("ids and seqs go out as MessagePack integers; undefined fields are left out", { skip: missing }, () => {
  const frame = wire.encodeFrame({ v: 1, type: "act", id: 12, seq: 300, deadline: undefined });
  const bytes = Buffer.from(frame);
  assert.equal(bytes[0], 0x84); // a map of four: deadline is absent
  const after = (key) => bytes[bytes.indexOf(Buffer.from(str(key))) + key.length + 1];
  assert.equal(after("id"), 12); // positive fixint, not a float 64 (0xcb)
  assert.equal(after("seq"), 0xcd); // uint 16
});

test("a batch frame is read as its messages, in order; any other frame as itself", { skip: missing }, () => {
  const ok = { v: 1, type: "ok", id: 3 };
  const event = { v: 1, type: "event", match: "m", seq: 4, event: { kind: "turn_started", seat: 1, turn: 2 } };
  const batch = wire.decodeFrame(wire.encodeFrame({ v: 1, type: "batch", messages: [ok, event] }));
  assert.deepEqual(wire.messagesOf(batch), [ok, event]);
  assert.deepEqual(wire.messagesOf(ok), [ok]);
});
