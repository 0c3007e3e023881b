// Drives a prosgrow server with the official OpenAI Node SDK: a chat, a
// stream (with include_usage), a tool-call round trip and an error.
//
//   PROSGROW_BASE_URL   e.g. http://127.0.0.1:8080/v1   (required)
//   PROSGROW_API_KEY    API key, if the server wants one
//   PROSGROW_EXPECT_TOOL_CALLS=1  require the model to answer the tool
//                       prompt with a tool call (true for the fake engine;
//                       a random-weight model will not)
// Exits 0 on success; prints the failed assertion otherwise.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.PROSGROW_BASE_URL;
if (!baseURL) {
  console.error('set PROSGROW_BASE_URL, e.g. http://127.0.0.1:8080/v1');
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey: process.env.PROSGROW_API_KEY || 'unused', maxRetries: 0, timeout: 120000 });
const expectToolCalls = process.env.PROSGROW_EXPECT_TOOL_CALLS === '1';

function checkUsage(usage) {
  assert.ok(usage, 'usage missing');
  assert.ok(usage.prompt_tokens > 0);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  const details = usage.prompt_tokens_details;
  assert.equal(typeof details.cached_tokens, 'number');
  const tiers = details.cached_tokens_by_tier;
  assert.equal(details.cached_tokens, tiers.device + tiers.host + tiers.disk);
}

const models = await client.models.list();
const model = models.data[0].id;
assert.equal(typeof models.data[0].context_length, 'number');

// 1. A plain chat.
const chat = await client.chat.completions.create({
  model,
  messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello.' }],
  max_tokens: 32,
  temperature: 0,
});
assert.equal(chat.object, 'chat.completion');
assert.equal(chat.choices[0].message.role, 'assistant');
assert.equal(typeof chat.choices[0].message.content, 'string');
assert.ok(['stop', 'length'].includes(chat.choices[0].finish_reason));
checkUsage(chat.usage);

// 2. A stream with usage at the end.
const stream = await client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Count to three.' }],
  max_tokens: 32,
  stream: true,
  stream_options: { include_usage: true },
});
let streamed = '';
let finish = null;
let usage = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    if (choice.delta?.content) streamed += choice.delta.content;
    if (choice.finish_reason) finish = choice.finish_reason;
  }
}
assert.ok(['stop', 'length'].includes(finish), `finish_reason ${finish}`);
checkUsage(usage);
if (expectToolCalls) assert.ok(streamed.length > 0);

// 3. A tool-call round trip.
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}];
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
const first = await client.chat.completions.create({ model, messages, tools, max_tokens: 64 });
const calls = first.choices[0].message.tool_calls ?? [];
if (expectToolCalls) {
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].function.name, 'get_weather');
}
// The second turn carries the assistant's call and the tool's answer. A
// model that did not call the tool (random weights) gets the call written
// into the history by hand, so the round trip still goes through the
// server's chat template.
const call = calls[0] ?? {
  id: 'call_sdk_1',
  type: 'function',
  function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }) },
};
const args = JSON.parse(call.function.arguments);
messages.push(calls.length > 0 ? first.choices[0].message : { role: 'assistant', content: null, tool_calls: [call] });
messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ city: args.city, weather: 'sunny' }) });
const second = await client.chat.completions.create({ model, messages, tools, max_tokens: 64 });
assert.ok(['stop', 'length', 'tool_calls'].includes(second.choices[0].finish_reason));
assert.ok(second.usage.prompt_tokens > first.usage.prompt_tokens, 'the call and its result reach the prompt');
if (expectToolCalls) {
  assert.equal(second.choices[0].finish_reason, 'stop');
  assert.equal(typeof second.choices[0].message.content, 'string');
  assert.match(second.choices[0].message.content, /sunny/);
}

// 4. Errors surface as the SDK's typed errors.
await assert.rejects(
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], n: 2 }),
  (err) => err instanceof OpenAI.BadRequestError && err.status === 400,
);
await assert.rejects(
  client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
  (err) => err instanceof OpenAI.NotFoundError,
);

console.log('openai sdk test: ok');
