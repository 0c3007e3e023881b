// Structured outputs and enforced tool calls through the official OpenAI Node
// SDK against a real prosgrow server (a random-weight model: whatever it
// "wants" to write, constrained decoding must keep the output valid).
//
//   PROSGROW_BASE_URL          e.g. http://127.0.0.1:8080/v1   (required)
//   PROSGROW_STRUCTURED_N      response_format requests (default 100)
//
// Checks, with ajv as the independent validator:
//   (a) N json_schema requests over 12 schemas of the supported subset, at
//       temperature > 0 with varied seeds: every one finishes ("stop"),
//       parses, and validates; the outputs are not all the same;
//   (b) client.beta.chat.completions.parse with a json_schema: the parsed
//       content validates;
//   (c) tool_choice "required" answers with calls to offered tools whose
//       arguments validate; a named tool_choice calls exactly that tool;
//       strict tools under "auto", if called, have valid arguments;
//   (d) json_object gives an object; an unsupported keyword and an unknown
//       named tool are 400s that say what is wrong.
// Exits 0 and prints "openai structured test: ok" on success.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import OpenAI from 'openai';

const baseURL = process.env.PROSGROW_BASE_URL;
if (!baseURL) {
  console.error('set PROSGROW_BASE_URL, e.g. http://127.0.0.1:8080/v1');
  process.exit(2);
}
const N = Number(process.env.PROSGROW_STRUCTURED_N || 100);
const client = new OpenAI({ baseURL, apiKey: process.env.PROSGROW_API_KEY || 'unused', maxRetries: 0, timeout: 120000 });
const ajv = new Ajv({ strict: false, allErrors: true });
const model = (await client.models.list()).data[0].id;

// Every schema bounds its output (maxLength, maxItems, enums), so a model
// that never chooses to stop is still brought to the end of the value.
const name = { type: 'string', minLength: 1, maxLength: 12 };
const schemas = {
  person: {
    type: 'object',
    properties: { name, age: { type: 'integer' }, email: { type: ['string', 'null'], maxLength: 16 } },
    required: ['name', 'age'],
    additionalProperties: false,
  },
  flags: {
    type: 'object',
    properties: { on: { type: 'boolean' }, off: { type: 'boolean' }, none: { type: 'null' } },
    required: ['on', 'off', 'none'],
    additionalProperties: false,
  },
  colour: { type: 'object', properties: { colour: { enum: ['red', 'green', 'blue', 7, null] } }, required: ['colour'] },
  numbers: { type: 'array', items: { type: 'number' }, minItems: 1, maxItems: 4 },
  tags: {
    type: 'object',
    properties: { tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 } },
    required: ['tags'],
    additionalProperties: false,
  },
  point: {
    type: 'object',
    properties: { x: { type: 'number' }, y: { type: 'number' }, label: { const: 'pt' } },
    required: ['x', 'y', 'label'],
    additionalProperties: false,
  },
  either: {
    anyOf: [
      { type: 'object', properties: { ok: { const: true }, value: { type: 'integer' } }, required: ['ok', 'value'], additionalProperties: false },
      { type: 'object', properties: { ok: { const: false }, error: name }, required: ['ok', 'error'], additionalProperties: false },
    ],
  },
  tree: {
    $defs: {
      node: {
        type: 'object',
        properties: { v: { type: 'integer' }, kids: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 } },
        required: ['v'],
        additionalProperties: false,
      },
    },
    $ref: '#/$defs/node',
  },
  legacy_defs: {
    definitions: { id: { type: 'integer' } },
    type: 'object',
    properties: { ids: { type: 'array', items: { $ref: '#/definitions/id' }, maxItems: 3 } },
    required: ['ids'],
    additionalProperties: false,
  },
  optional_only: {
    title: 'Options',
    description: 'all keys optional',
    type: 'object',
    properties: { a: { type: 'integer', description: 'an int' }, b: { type: 'boolean', default: true }, c: name },
    additionalProperties: false,
  },
  matrix: {
    type: 'array',
    items: { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 2 },
    minItems: 1,
    maxItems: 2,
  },
  scalar: { type: ['integer', 'boolean', 'null'] },
};
const names = Object.keys(schemas);
const validators = Object.fromEntries(names.map((k) => [k, ajv.compile(schemas[k])]));

function check(kind, content, finish) {
  assert.equal(finish, 'stop', `${kind}: finish_reason ${finish}, content ${JSON.stringify(content)}`);
  let value;
  try {
    value = JSON.parse(content);
  } catch (e) {
    assert.fail(`${kind}: not JSON: ${JSON.stringify(content)}`);
  }
  const ok = validators[kind](value);
  assert.ok(ok, `${kind}: ${JSON.stringify(content)} fails: ${ajv.errorsText(validators[kind].errors)}`);
  return value;
}

// (a) N requests, 8 at a time.
const outputs = Object.fromEntries(names.map((k) => [k, new Set()]));
let valid = 0;
async function one(i) {
  const kind = names[i % names.length];
  const r = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: `Reply with ${kind} #${i} as JSON.` }],
    response_format: { type: 'json_schema', json_schema: { name: kind, schema: schemas[kind], strict: true } },
    temperature: 0.8 + (i % 5) * 0.1,
    seed: 1000 + i,
    max_tokens: 400,
  });
  const content = r.choices[0].message.content;
  check(kind, content, r.choices[0].finish_reason);
  outputs[kind].add(content);
  valid++;
}
for (let i = 0; i < N; i += 8) {
  await Promise.all(Array.from({ length: Math.min(8, N - i) }, (_, j) => one(i + j)));
}
assert.equal(valid, N);
const distinct = names.reduce((s, k) => s + outputs[k].size, 0);
assert.ok(distinct > names.length, `outputs barely vary: ${distinct} distinct over ${N}`);
console.log(`(a) ${valid}/${N} json_schema outputs parse and validate (${names.length} schemas, ${distinct} distinct)`);

// (b) The SDK's parse helper.
const parsed = await client.beta.chat.completions.parse({
  model,
  messages: [{ role: 'user', content: 'A person, please.' }],
  response_format: { type: 'json_schema', json_schema: { name: 'person', schema: schemas.person, strict: true } },
  temperature: 1,
  seed: 7,
  max_tokens: 400,
});
const msg = parsed.choices[0].message;
assert.ok(msg.parsed && typeof msg.parsed === 'object', `parse() gave ${JSON.stringify(msg)}`);
assert.ok(validators.person(msg.parsed), ajv.errorsText(validators.person.errors));
assert.deepEqual(msg.parsed, check('person', msg.content, parsed.choices[0].finish_reason));
console.log('(b) beta.chat.completions.parse:', JSON.stringify(msg.parsed));

// (c) Tool calls.
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: {
        type: 'object',
        properties: { city: name, unit: { enum: ['c', 'f'] } },
        required: ['city', 'unit'],
        additionalProperties: false,
      },
      strict: true,
    },
  },
  {
    type: 'function',
    function: {
      name: 'lookup',
      parameters: {
        type: 'object',
        properties: { id: { type: 'integer' }, fields: { type: 'array', items: name, maxItems: 2 } },
        required: ['id'],
        additionalProperties: false,
      },
    },
  },
];
const toolValidators = Object.fromEntries(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
// A call cut by max_tokens ends the answer with finish_reason 'length' and
// its arguments as far as they got (not JSON); the calls before it are whole.
function checkCalls(r, allowed, what) {
  const m = r.choices[0].message;
  const finish = r.choices[0].finish_reason;
  assert.ok(finish === 'tool_calls' || finish === 'length', `${what}: ${JSON.stringify(r.choices[0])}`);
  assert.ok(Array.isArray(m.tool_calls) && m.tool_calls.length >= 1, `${what}: no tool_calls`);
  if (finish === 'length') {
    const cut = m.tool_calls.pop();
    assert.throws(() => JSON.parse(cut.function.arguments), `${what}: a cut call's arguments parse`);
  }
  for (const call of m.tool_calls) {
    assert.equal(call.type, 'function');
    assert.ok(allowed.includes(call.function.name), `${what}: called ${call.function.name}`);
    const args = JSON.parse(call.function.arguments);
    const v = toolValidators[call.function.name];
    assert.ok(v(args), `${what}: ${call.function.arguments} fails: ${ajv.errorsText(v.errors)}`);
  }
  return m.tool_calls;
}
const called = new Set();
for (let i = 0; i < 6; i++) {
  const r = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: `What is the weather in city ${i}?` }],
    tools,
    tool_choice: 'required',
    temperature: 1,
    seed: 50 + i,
    max_tokens: 300,
  });
  for (const c of checkCalls(r, ['get_weather', 'lookup'], 'required')) called.add(c.function.name);
}
for (const fn of ['lookup', 'get_weather']) {
  const r = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Look it up.' }],
    tools,
    tool_choice: { type: 'function', function: { name: fn } },
    parallel_tool_calls: false,
    temperature: 0.9,
    seed: 3,
    max_tokens: 300,
  });
  const calls = checkCalls(r, [fn], `named ${fn}`);
  assert.equal(calls.length, 1);
}
let autoCalls = 0;
for (let i = 0; i < 3; i++) {
  const r = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Weather?' }],
    tools,
    tool_choice: 'auto',
    temperature: 1,
    seed: 90 + i,
    max_tokens: 48,
  });
  if (r.choices[0].message.tool_calls?.length) {
    checkCalls(r, ['get_weather', 'lookup'], 'auto');
    autoCalls++;
  }
}
console.log(`(c) required called ${[...called].join(', ')}; named calls ok; auto made ${autoCalls} call(s)`);

// (d) json_object and the errors.
const obj = await client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Any JSON object.' }],
  response_format: { type: 'json_object' },
  temperature: 0.7,
  seed: 11,
  max_tokens: 64,
});
const objText = obj.choices[0].message.content;
if (obj.choices[0].finish_reason === 'stop') {
  const v = JSON.parse(objText);
  assert.ok(v && typeof v === 'object' && !Array.isArray(v), objText);
} else {
  assert.equal(obj.choices[0].finish_reason, 'length');
  assert.match(objText.trimStart(), /^\{/);
}
async function expect400(body, param, part, code) {
  try {
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 8, ...body });
  } catch (e) {
    assert.equal(e.status, 400, String(e));
    assert.equal(e.param, param, String(e));
    assert.ok(e.message.includes(part), e.message);
    if (code) assert.equal(e.code, code);
    return;
  }
  assert.fail(`expected a 400 for ${JSON.stringify(body)}`);
}
await expect400(
  { response_format: { type: 'json_schema', json_schema: { name: 'p', schema: { type: 'object', properties: { e: { type: 'string', format: 'email' } } } } } },
  'response_format.json_schema.schema',
  "'format'",
  'unsupported_parameter',
);
await expect400({ response_format: { type: 'json_schema', json_schema: { name: 'p', schema: { oneOf: [] } } } }, 'response_format.json_schema.schema', "'oneOf'", 'unsupported_parameter');
await expect400({ tools, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice', "'nope'");
await expect400({ tool_choice: 'required' }, 'tool_choice', 'tools');
console.log('(d) json_object and errors ok');
console.log('openai structured test: ok');
