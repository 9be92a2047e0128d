// The server-sent events reader: the stream format as the HTML standard defines it.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { serverEvents, type ServerEvent } from "../src/index.js";

function stream(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(body: ReadableStream<Uint8Array>): Promise<ServerEvent[]> {
  const out: ServerEvent[] = [];
  for await (const event of serverEvents(body)) out.push(event);
  return out;
}

test("events, comments, multi-line data, ids and retry", async () => {
  const events = await read(
    stream(": keep-alive\n\n", "event: snapshot\ndata: {\"a\":1}\n\n", "data: one\ndata: two\nid: 7\nretry: 1500\n\n"),
  );
  assert.deepEqual(events, [
    { event: "snapshot", data: '{"a":1}', id: null, retry: null },
    { event: "message", data: "one\ntwo", id: "7", retry: 1500 },
  ]);
});

test("lines split across chunks, CRLF and CR line ends, a split multi-byte character", async () => {
  const snowman = new TextEncoder().encode("data: \u2603\n\n");
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const encoder = new TextEncoder();
      controller.enqueue(encoder.encode("event: change\r"));
      controller.enqueue(encoder.encode("\ndata: x"));
      controller.enqueue(encoder.encode("y\r\n\r\ndata: z\r\r"));
      controller.enqueue(snowman.slice(0, 8));
      controller.enqueue(snowman.slice(8));
      controller.close();
    },
  });
  assert.deepEqual(
    (await read(body)).map((e) => [e.event, e.data]),
    [
      ["change", "xy"],
      ["message", "z"],
      ["message", "\u2603"],
    ],
  );
});

test("an event without data, or cut off by the end of the stream, is not dispatched", async () => {
  assert.deepEqual(await read(stream("event: empty\n\n", "data: cut")), []);
});

test("a byte order mark and a field without a colon", async () => {
  const events = await read(stream("\ufeffdata\n\ndata:no space\n\n"));
  assert.deepEqual(
    events.map((e) => e.data),
    ["", "no space"],
  );
});
