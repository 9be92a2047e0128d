/** Server-sent events read from a `fetch` body (so the API key travels in a header, never a URL). */

/** One event of a `text/event-stream`. */
export interface ServerEvent {
  /** The `event:` field (`message` when absent). */
  event: string;
  /** The `data:` lines, joined by newlines. */
  data: string;
  /** The `id:` field, if any. */
  id: string | null;
  /** The `retry:` field (milliseconds), if any. */
  retry: number | null;
}

/**
 * The events of a `text/event-stream` body, as the HTML standard parses them: lines end with
 * CR, LF or CRLF; a blank line ends an event; `:` lines are comments (keep-alives).
 */
export async function* serverEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let id: string | null = null;
  let retry: number | null = null;
  let first = true;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (first && buffer.length) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A CR at the very end may be the first half of a CRLF still on its way.
        if (end < 0 || (buffer[end] === "\r" && end === buffer.length - 1 && !done)) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length) yield { event: event || "message", data: data.join("\n"), id, retry };
          data = [];
          event = "";
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "data") data.push(text);
        else if (field === "event") event = text;
        else if (field === "id" && !text.includes("\0")) id = text;
        else if (field === "retry" && /^\d+$/.test(text)) retry = Number(text);
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
