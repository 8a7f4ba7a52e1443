// One WebSocket connection speaking the Gift of Tulips protocol (PROTOCOL.md):
// every message one binary frame holding one MessagePack map, the envelope
// keys `v`, `type` and `id` beside the message's own fields — or, once the
// client asked for the `batch` feature, several messages in one `batch` frame.

import { decode, encode } from "@msgpack/msgpack";
import WebSocket from "ws";

/** The protocol version this client speaks. */
export const VERSION = 1;

/**
 * Decode one frame. 64-bit integers (a finished open-box match's `seed`)
 * arrive as BigInt, every smaller integer as a plain Number, so no seed is
 * rounded to the nearest float 64.
 */
export function decodeFrame(data) {
  return decode(data, { useBigInt64: true });
}

/**
 * The messages of one decoded frame, in order: a `batch` frame's `messages`
 * (what one action caused for us), or the frame's own message.
 */
export function messagesOf(frame) {
  return frame.type === "batch" ? frame.messages : [frame];
}

/**
 * Encode one message. Fields left undefined are dropped (the protocol's
 * "absent"); ids are small integers, which encode as MessagePack integers.
 */
export function encodeFrame(message) {
  return encode(message, { ignoreUndefined: true });
}

/**
 * A connection to a server: `send` a request, then read what the server sends
 * with `for await (const msg of connection)` until it closes.
 */
export class Connection {
  #ws;
  #queue = [];
  #waiting = null;
  #closed = null;
  #nextId = 0;

  /** Open a connection to `url` (ws:// or wss://); resolves once it is open. */
  static open(url) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.binaryType = "nodebuffer";
      ws.once("open", () => resolve(new Connection(ws)));
      ws.once("error", reject);
    });
  }

  constructor(ws) {
    this.#ws = ws;
    ws.on("message", (data, isBinary) => {
      if (!isBinary) return this.#push({ error: new Error("text frame") });
      for (const message of messagesOf(decodeFrame(data))) this.#push({ message });
    });
    ws.on("close", (code, reason) => {
      this.#closed = { code, reason: reason.toString() };
      this.#push({ closed: this.#closed });
    });
    ws.on("error", (error) => this.#push({ error }));
  }

  #push(item) {
    if (this.#waiting) {
      const wake = this.#waiting;
      this.#waiting = null;
      wake(item);
    } else {
      this.#queue.push(item);
    }
  }

  /**
   * Send a request of `type` with `fields`; returns its id. Ids count up from
   * 1: small integers, far below 2**53, as PROTOCOL.md asks of JavaScript.
   */
  send(type, fields = {}) {
    const id = ++this.#nextId;
    this.#ws.send(encodeFrame({ v: VERSION, type, id, ...fields }));
    return id;
  }

  /** The next message from the server; throws once the connection is closed. */
  async next() {
    const item = this.#queue.length
      ? this.#queue.shift()
      : await new Promise((resolve) => {
          this.#waiting = resolve;
        });
    if (item.error) throw item.error;
    if (item.closed) {
      const { code, reason } = item.closed;
      throw new Error(`connection closed (${code}${reason ? `: ${reason}` : ""})`);
    }
    return item.message;
  }

  /** Every message from the server, in order, until `close` or the server closes. */
  async *[Symbol.asyncIterator]() {
    while (true) {
      if (this.#closed && !this.#queue.length) return;
      let message;
      try {
        message = await this.next();
      } catch (error) {
        if (this.#closed) return;
        throw error;
      }
      yield message;
    }
  }

  /** How the connection closed ({code, reason}), or null while it is open. */
  get closed() {
    return this.#closed;
  }

  /** Close the connection (normal closure, 1000). */
  close() {
    this.#ws.close(1000);
  }
}
