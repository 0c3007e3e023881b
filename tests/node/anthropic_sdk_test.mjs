// Drives a prosgrow server with the official Anthropic Node SDK
// (@anthropic-ai/sdk): a message, a stream, a tool round trip
// (tool_use -> tool_result -> answer), a second turn read from the prompt
// cache, count_tokens, and errors in Anthropic's shape.
//
//   PROSGROW_BASE_URL   e.g. http://127.0.0.1:8080   (required; no /v1)
//   PROSGROW_API_KEY    API key, if the server wants one
//   PROSGROW_EXPECT_TOOL_CALLS=1  the model answers the weather question with
//                       a get_weather tool call and the tool result with
//                       "sunny" (true for the fake engine; a random-weight
//                       model is sent the tool_use history instead)
//   PROSGROW_EXPECT_FORCED_TOOLS=1  the server enforces tool_choice any / tool
//                       and output_config.format (constrained decoding): a
//                       forced call and its round trip, structured outputs
// Exits 0 on success; prints the failed assertion otherwise.
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';

const baseURL = process.env.PROSGROW_BASE_URL;
if (!baseURL) {
  console.error('set PROSGROW_BASE_URL, e.g. http://127.0.0.1:8080');
  process.exit(2);
}
const apiKey = process.env.PROSGROW_API_KEY || 'unused';
const client = new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });
const expectToolCalls = process.env.PROSGROW_EXPECT_TOOL_CALLS === '1';

const model = (await (await fetch(`${baseURL}/v1/models`, { headers: { 'x-api-key': apiKey } })).json()).data[0].id;

// Anthropic's input_tokens excludes the cache reads and writes; the three
// add up to the prompt (prosgrow's own figure, nested under "prosgrow").
function checkUsage(usage) {
  assert.ok(usage, 'usage missing');
  for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
    assert.equal(typeof usage[k], 'number', `usage.${k}`);
    assert.ok(usage[k] >= 0, `usage.${k} >= 0`);
  }
  const p = usage.prosgrow;
  assert.ok(p.prompt_tokens > 0);
  assert.equal(usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens, p.prompt_tokens);
  const t = p.cached_tokens_by_tier;
  assert.equal(usage.cache_read_input_tokens, t.device + t.host + t.disk);
  // Miss reasons (the object OpenAI's usage carries as
  // prompt_tokens_details.miss_reasons) account for every uncached prompt
  // token: Anthropic's input_tokens plus the cache writes.
  const m = p.miss_reasons;
  assert.ok(m, `usage.prosgrow.miss_reasons missing: ${JSON.stringify(usage)}`);
  for (const k of ['never_seen', 'evicted', 'diverged', 'loading', 'policy']) {
    assert.ok(Number.isInteger(m[k]) && m[k] >= 0, `miss_reasons.${k}`);
  }
  const missed = m.never_seen + m.evicted + m.diverged + m.loading + m.policy;
  assert.equal(missed, usage.input_tokens + usage.cache_creation_input_tokens, JSON.stringify(usage));
  const e = m.evicted_by_tier;
  assert.equal(m.evicted, e.device + e.host + e.disk);
}

function textOf(message) {
  return message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
}

// 1. A message, with a cached system prompt and a session id.
const system = [{ type: 'text', text: 'You are a terse assistant. Answer in one short sentence.',
  cache_control: { type: 'ephemeral' } }];
const turn1 = [{ role: 'user', content: 'Say hello.' }];
const first = await client.messages.create({
  model, max_tokens: 16, temperature: 0, system, messages: turn1, metadata: { user_id: 'node-anthropic' },
});
assert.equal(first.type, 'message');
assert.equal(first.role, 'assistant');
assert.match(first.id, /^msg_/);
assert.equal(first.model, model);
assert.ok(Array.isArray(first.content) && first.content.length >= 1);
assert.ok(['end_turn', 'max_tokens'].includes(first.stop_reason), `stop_reason ${first.stop_reason}`);
assert.equal(first.stop_sequence, null);
checkUsage(first.usage);
assert.ok(first.usage.output_tokens > 0);
// The system block's breakpoint: its prefix was written (or read) now.
assert.ok(first.usage.cache_creation_input_tokens + first.usage.cache_read_input_tokens > 0);

// 2. The second turn of the same conversation reads the first's prompt from the cache.
const turn2 = [...turn1, { role: 'assistant', content: textOf(first) || 'Hello.' },
  { role: 'user', content: 'Now say goodbye.' }];
const second = await client.messages.create({
  model, max_tokens: 16, temperature: 0, system, messages: turn2, metadata: { user_id: 'node-anthropic' },
});
checkUsage(second.usage);
assert.ok(second.usage.cache_read_input_tokens > 0, `no cache read: ${JSON.stringify(second.usage)}`);

// 3. count_tokens of that request is the prompt the server ran.
const counted = await client.messages.countTokens({ model, system, messages: turn2 });
assert.equal(counted.input_tokens, second.usage.prosgrow.prompt_tokens);

// 4. A stream: named events in order, and the SDK's accumulated message.
const stream = client.messages.stream({
  model, max_tokens: 16, temperature: 0, messages: [{ role: 'user', content: 'Count to three.' }],
});
const events = [];
let deltas = '';
let finalUsage = null;  // message_delta carries the final usage (with prosgrow's figures)
stream.on('streamEvent', (e) => {
  events.push(e.type);
  if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') deltas += e.delta.text;
  if (e.type === 'message_delta') finalUsage = e.usage;
});
const streamed = await stream.finalMessage();
assert.equal(events[0], 'message_start');
assert.equal(events.at(-1), 'message_stop');
assert.equal(events.at(-2), 'message_delta');
assert.ok(['end_turn', 'max_tokens'].includes(streamed.stop_reason));
assert.equal(textOf(streamed), deltas);
checkUsage(finalUsage);
for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
  assert.equal(streamed.usage[k], finalUsage[k], `accumulated usage.${k}`);
}
assert.ok(streamed.usage.output_tokens > 0);

// 5. A tool round trip: tool_use -> tool_result -> answer.
const tools = [{
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  cache_control: { type: 'ephemeral', ttl: '1h' },
}];
const question = { role: 'user', content: 'What is the weather in Paris?' };
let toolUse = { type: 'tool_use', id: 'toolu_01prosgrowtest', name: 'get_weather', input: { city: 'Paris' } };
if (expectToolCalls) {
  const call = await client.messages.create({ model, max_tokens: 64, tools, messages: [question] });
  assert.equal(call.stop_reason, 'tool_use');
  const uses = call.content.filter((b) => b.type === 'tool_use');
  assert.equal(uses.length, 1);
  assert.match(uses[0].id, /^toolu_/);
  assert.equal(uses[0].name, 'get_weather');
  assert.deepEqual(uses[0].input, { city: 'Paris' });
  toolUse = uses[0];
  // The same call streamed: a tool_use block whose input arrives as input_json_delta.
  const s = client.messages.stream({ model, max_tokens: 64, tools, messages: [question] });
  const kinds = [];
  s.on('streamEvent', (e) => {
    if (e.type === 'content_block_start') kinds.push(e.content_block.type);
    if (e.type === 'content_block_delta') kinds.push(e.delta.type);
  });
  const final = await s.finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  assert.ok(kinds.includes('tool_use') && kinds.includes('input_json_delta'), kinds.join(','));
  assert.deepEqual(final.content.find((b) => b.type === 'tool_use').input, { city: 'Paris' });
}
const answer = await client.messages.create({
  model, max_tokens: 32, tools, metadata: { user_id: 'node-anthropic-tools' },
  messages: [question, { role: 'assistant', content: [toolUse] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny, 21 C' }] }],
});
assert.ok(['end_turn', 'max_tokens', 'tool_use'].includes(answer.stop_reason));
checkUsage(answer.usage);
if (expectToolCalls) {
  assert.equal(answer.stop_reason, 'end_turn');
  assert.match(textOf(answer), /sunny/);
}

// 5b. tool_choice forces the call (constrained decoding), then the round trip
// with the model's own tool_use, ending in a text answer. Set
// PROSGROW_EXPECT_FORCED_TOOLS=1 against a real model (a random-weight model
// never calls on its own; the fake engine's scripted replies ignore tool_choice).
if (process.env.PROSGROW_EXPECT_FORCED_TOOLS === '1') {
  // A bounded city, so the forced call ends within max_tokens (a call the
  // limit cuts is reported as stop_reason max_tokens, not tool_use).
  const bounded = [{ ...tools[0], input_schema: { type: 'object', properties: { city: { type: 'string', maxLength: 16 } }, required: ['city'] } }];
  // One call (disable_parallel_tool_use): a sampled model may otherwise go on
  // calling until max_tokens cuts a call.
  for (const tool_choice of [{ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    { type: 'any', disable_parallel_tool_use: true }]) {
    const forced = await client.messages.create({ model, max_tokens: 256, tools: bounded, tool_choice, messages: [question] });
    assert.equal(forced.stop_reason, 'tool_use', JSON.stringify(forced));
    const use = forced.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'get_weather');
    assert.match(use.id, /^toolu_/);
    assert.equal(typeof use.input, 'object');
    const reply = await client.messages.create({
      model, max_tokens: 16, tools,
      messages: [question, { role: 'assistant', content: forced.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 C' }] }],
    });
    checkUsage(reply.usage);
    assert.ok(['end_turn', 'max_tokens'].includes(reply.stop_reason), JSON.stringify(reply));
    assert.ok(reply.content.some((b) => b.type === 'text' && typeof b.text === 'string'), JSON.stringify(reply));
  }
}

// 5c. Structured outputs (output_config.format): the text answer is one JSON
// value valid under the schema, whatever the model would have written.
if (process.env.PROSGROW_EXPECT_FORCED_TOOLS === '1') {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 12 }, sunny: { type: 'boolean' } },
    required: ['city', 'sunny'],
    additionalProperties: false,
  };
  for (const seed of [1, 2, 3]) {
    const out = await client.messages.create({
      model, max_tokens: 200, temperature: 1, messages: [question],
      output_config: { format: { type: 'json_schema', schema } }, metadata: { user_id: `structured-${seed}` },
    });
    assert.equal(out.stop_reason, 'end_turn', JSON.stringify(out));
    const value = JSON.parse(textOf(out));
    assert.deepEqual(Object.keys(value).sort(), ['city', 'sunny'], textOf(out));
    assert.equal(typeof value.city, 'string');
    assert.equal(typeof value.sunny, 'boolean');
  }
  await assert.rejects(client.messages.create({
    model, max_tokens: 8, messages: [question],
    output_config: { format: { type: 'json_schema', schema: { type: 'integer', minimum: 1 } } },
  }), (err) => {
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.match(err.error.error.message, /minimum/);
    return true;
  });
}

// 6. Errors come back as Anthropic errors the SDK maps to its classes.
await assert.rejects(client.messages.create({ model, messages: turn1 }), (err) => {
  assert.ok(err instanceof Anthropic.BadRequestError, String(err));
  assert.equal(err.status, 400);
  assert.equal(err.error.type, 'error');
  assert.equal(err.error.error.type, 'invalid_request_error');
  assert.match(err.error.error.message, /max_tokens/);
  return true;
});
await assert.rejects(client.messages.create({ model, max_tokens: 8, messages: turn1, frobnicate: true }), (err) => {
  assert.ok(err instanceof Anthropic.BadRequestError, String(err));
  assert.match(err.error.error.message, /frobnicate/);
  return true;
});
if (process.env.PROSGROW_API_KEY) {
  const bad = new Anthropic({ baseURL, apiKey: 'wrong-key', maxRetries: 0 });
  await assert.rejects(bad.messages.create({ model, max_tokens: 8, messages: turn1 }), (err) => {
    assert.ok(err instanceof Anthropic.AuthenticationError, String(err));
    assert.equal(err.error.error.type, 'authentication_error');
    return true;
  });
}

console.log('anthropic sdk test: ok');
