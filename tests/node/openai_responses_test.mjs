// Drives a prosgrow server's Responses API (POST /v1/responses) with the
// official OpenAI Node SDK: responses.create and responses.stream, plain
// text, forced function calls (tool_choice names the tool, enforced by
// constrained decoding, so a random-weight model calls it too), a tool
// round trip continued with previous_response_id, Codex CLI's request shape
// (hosted tools such as web_search beside the function tools: accepted, not
// offered, counted on /metrics), the model catalogue fields Codex reads from
// /v1/models, and the errors.
//
//   PROSGROW_BASE_URL   e.g. http://127.0.0.1:8080/v1   (required)
//   PROSGROW_API_KEY    API key, if the server wants one
// Exits 0 on success; prints the failed assertion otherwise.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.PROSGROW_BASE_URL;
if (!baseURL) {
  console.error('set PROSGROW_BASE_URL, e.g. http://127.0.0.1:8080/v1');
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey: process.env.PROSGROW_API_KEY || 'unused', maxRetries: 0, timeout: 120000 });
const model = (await client.models.list()).data[0].id;

const tools = [{
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
}];
const forced = { type: 'function', name: 'get_weather' };

function checkUsage(usage) {
  assert.ok(usage, 'usage missing');
  assert.ok(usage.input_tokens > 0);
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
  assert.equal(typeof usage.input_tokens_details.cached_tokens, 'number');
}

// 1. create, plain text.
const plain = await client.responses.create({
  model, instructions: 'You are terse.', input: 'Say hello.', max_output_tokens: 12, temperature: 0,
});
assert.equal(plain.object, 'response');
assert.ok(['completed', 'incomplete'].includes(plain.status), plain.status);
assert.equal(typeof plain.output_text, 'string');
assert.equal(plain.output[0].type, 'message');
assert.equal(plain.instructions, 'You are terse.');
checkUsage(plain.usage);

// 2. create with a forced function call.
const call = await client.responses.create({
  model, input: 'What is the weather in Paris?', tools, tool_choice: forced, max_output_tokens: 64, temperature: 0,
});
const fc = call.output.find((o) => o.type === 'function_call');
assert.ok(fc, JSON.stringify(call.output));
assert.equal(fc.name, 'get_weather');
assert.equal(typeof JSON.parse(fc.arguments), 'object');
assert.ok(fc.call_id.length > 0);

// 3. The tool's result, continued from the stored response.
const answer = await client.responses.create({
  model, previous_response_id: call.id, tools, max_output_tokens: 12, temperature: 0,
  input: [{ type: 'function_call_output', call_id: fc.call_id, output: '{"sky": "sunny", "celsius": 21}' }],
});
assert.equal(answer.previous_response_id, call.id);
checkUsage(answer.usage);
// The stored conversation is the prefix of this prompt: its KV is reused.
assert.ok(answer.usage.input_tokens > call.usage.input_tokens);
assert.ok(answer.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(answer.usage));

// 4. responses.stream, text: the deltas add up to the final text.
const textStream = client.responses.stream({ model, input: 'Count to five.', max_output_tokens: 12, temperature: 0 });
let deltas = '';
let terminal = null;
const seen = new Set();
for await (const event of textStream) {
  seen.add(event.type);
  if (event.type === 'response.output_text.delta') deltas += event.delta;
  if (event.type === 'response.completed' || event.type === 'response.incomplete') terminal = event.response;
}
const streamed = await textStream.finalResponse();
// The text of the final snapshot's message items (output_text is only set on
// a response.completed snapshot, and 12 tokens may end it incomplete).
const finalText = streamed.output.filter((o) => o.type === 'message')
  .flatMap((o) => o.content).map((c) => c.text).join('');
assert.equal(deltas, finalText);
for (const t of ['response.created', 'response.output_item.added', 'response.content_part.added',
  'response.output_text.done', 'response.output_item.done']) {
  assert.ok(seen.has(t), `no ${t} event`);
}
assert.ok(terminal, 'no response.completed / response.incomplete event');
checkUsage(terminal.usage);

// 5. responses.stream, a forced call: argument deltas, then the whole call.
const callStream = client.responses.stream({
  model, input: 'Weather in Rome?', tools, tool_choice: forced, max_output_tokens: 64, temperature: 0,
});
let args = '';
let argsDone = null;
for await (const event of callStream) {
  if (event.type === 'response.function_call_arguments.delta') args += event.delta;
  if (event.type === 'response.function_call_arguments.done') argsDone = event.arguments;
}
const streamedCall = (await callStream.finalResponse()).output.find((o) => o.type === 'function_call');
assert.ok(streamedCall, 'the stream produced no function_call');
assert.equal(streamedCall.name, 'get_weather');
assert.equal(args, streamedCall.arguments);
assert.equal(argsDone, streamedCall.arguments);

// 6. Codex's shape: hosted tools (Codex CLI 0.171 sends web_search by default)
// beside a function tool are accepted and not offered to the model; the
// response lists only the function tool, and /metrics counts each skipped type.
// Through a router the counters live on the replicas: PROSGROW_METRICS_ROOTS
// names them (comma-separated) and the count is their sum.
const root = baseURL.replace(/\/v1\/?$/, '');
const headers = { Authorization: `Bearer ${process.env.PROSGROW_API_KEY || 'unused'}` };
const metricsRoots = (process.env.PROSGROW_METRICS_ROOTS || root).split(',');
async function skipped(type) {
  let total = 0;
  for (const r of metricsRoots) {
    const text = await (await fetch(`${r}/metrics`, { headers })).text();
    const line = text.split('\n').find((l) => l.startsWith(`prosgrow_hosted_tools_skipped_total{type="${type}"} `));
    total += line ? Number(line.split(' ').pop()) : 0;
  }
  return total;
}
const before = { web: await skipped('web_search'), image: await skipped('image_generation') };
const hosted = await client.responses.create({
  model, input: 'Say hello.', max_output_tokens: 8, temperature: 0,
  tools: [...tools, { type: 'web_search', external_web_access: false }, { type: 'image_generation' }],
});
assert.ok(['completed', 'incomplete'].includes(hosted.status), hosted.status);
assert.deepEqual(hosted.tools.map((t) => t.type), ['function'], JSON.stringify(hosted.tools));
assert.equal(await skipped('web_search'), before.web + 1);
assert.equal(await skipped('image_generation'), before.image + 1);
// A tool_choice that forces a hosted tool stays a 400.
await assert.rejects(
  client.responses.create({ model, input: 'x', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }),
  (e) => e.status === 400 && e.error?.param === 'tool_choice.type' && /web_search/.test(e.message),
);

// 7. The model catalogue Codex reads: GET /v1/models lists the model under
// "models" too, with the fields Codex's ModelInfo requires.
const listing = await (await fetch(`${baseURL}/models`, { headers })).json();
assert.equal(listing.data[0].id, model);
const info = listing.models[0];
assert.equal(info.slug, model);
assert.equal(info.display_name, model);
assert.ok(info.context_window > 0, JSON.stringify(info));
assert.deepEqual(info.input_modalities, ['text']);
for (const [key, type] of [['supported_reasoning_levels', 'object'], ['shell_type', 'string'],
  ['visibility', 'string'], ['supported_in_api', 'boolean'], ['priority', 'number'],
  ['base_instructions', 'string'], ['supports_reasoning_summaries', 'boolean'], ['support_verbosity', 'boolean'],
  ['truncation_policy', 'object'], ['supports_parallel_tool_calls', 'boolean'],
  ['experimental_supported_tools', 'object']]) {
  assert.equal(typeof info[key], type, `models[0].${key}: ${JSON.stringify(info[key])}`);
}
assert.equal((await client.models.retrieve(model)).context_window, info.context_window);

// 8. Errors: an unknown tool type and an unknown previous response are 400s.
await assert.rejects(
  client.responses.create({ model, input: 'x', tools: [{ type: 'teleport' }] }),
  (e) => e.status === 400 && e.error?.param === 'tools[0].type',
);
await assert.rejects(
  client.responses.create({ model, input: 'x', previous_response_id: 'resp_nope' }),
  (e) => e.status === 400 && e.error?.param === 'previous_response_id',
);
console.log('openai responses test: ok');
