// Streams a tool-call answer through the official OpenAI Node SDK's stream
// helper (client.beta.chat.completions.stream, which assembles
// delta.tool_calls the way OpenAI sends them) and checks it against the
// non-streamed answer: same content, same calls (names, arguments), finish
// reason "tool_calls", the arguments arriving as deltas.
//
//   PROSGROW_BASE_URL   e.g. http://127.0.0.1:8080/v1   (required)
//   PROSGROW_API_KEY    API key, if the server wants one
// The model must answer with two calls, get_weather then read_file (the fake
// engine does). Exits 0 on success; prints the failed assertion otherwise.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.PROSGROW_BASE_URL;
if (!baseURL) {
  console.error('set PROSGROW_BASE_URL, e.g. http://127.0.0.1:8080/v1');
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey: process.env.PROSGROW_API_KEY || 'unused', maxRetries: 0, timeout: 120000 });
const model = (await client.models.list()).data[0].id;
const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } } },
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];
const messages = [{ role: 'user', content: 'Weather in Paris, and read a.txt' }];

const full = await client.chat.completions.create({ model, messages, tools, max_tokens: 512 });
assert.equal(full.choices[0].finish_reason, 'tool_calls');
const want = full.choices[0].message;
assert.deepEqual(want.tool_calls.map((c) => c.function.name), ['get_weather', 'read_file']);
assert.deepEqual(JSON.parse(want.tool_calls[0].function.arguments), { city: 'Paris', days: 3 });

const stream = client.beta.chat.completions.stream({ model, messages, tools, max_tokens: 512 });
let argumentDeltas = 0;
for await (const chunk of stream) {
  for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) {
    if (tc.function?.arguments) argumentDeltas++;
  }
}
const got = (await stream.finalChatCompletion()).choices[0];
assert.equal(got.finish_reason, 'tool_calls');
assert.equal(got.message.content ?? '', want.content ?? '');
assert.equal(got.message.tool_calls.length, 2);
for (let i = 0; i < 2; i++) {
  assert.equal(got.message.tool_calls[i].type, 'function');
  assert.match(got.message.tool_calls[i].id, /^call_/);
  assert.equal(got.message.tool_calls[i].function.name, want.tool_calls[i].function.name);
  assert.equal(got.message.tool_calls[i].function.arguments, want.tool_calls[i].function.arguments);
}
assert.ok(argumentDeltas >= 2, `arguments came in ${argumentDeltas} deltas`);  // how many depends on timing
console.log('tool stream test: ok');
