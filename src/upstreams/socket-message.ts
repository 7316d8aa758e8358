// A broker socket's text message as the JSON object both brokers send, or why it is not one: a frame that
// cannot be read is reported, never thrown, so one bad frame cannot end a feed.

/** The message's JSON object, or the reason it is unreadable. */
export function socketMessageObject(text: string): { object: Record<string, unknown> } | { unreadable: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { unreadable: 'not JSON' };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { unreadable: 'not a JSON object' };
  return { object: json as Record<string, unknown> };
}
