// Reads the KV cache's miss reasons through the official OpenAI Node SDK
// (usage.prompt_tokens_details.miss_reasons): a first request (never seen),
// the same prompt edited part way (diverged), and a streamed chat whose
// final usage chunk carries the reasons. Run by tests/serve_miss_reasons_test.cc.
//
//   PROSGROW_BASE_URL   e.g. http://127.0.0.1:8080/v1   (required)
// Exits 0 on success; prints the failed assertion otherwise.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.PROSGROW_BASE_URL;
if (!baseURL) {
  console.error('set PROSGROW_BASE_URL, e.g. http://127.0.0.1:8080/v1');
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 120000 });
const reasons = ['never_seen', 'evicted', 'diverged', 'loading', 'policy'];

function checkReasons(usage) {
  const d = usage.prompt_tokens_details;
  const m = d.miss_reasons;
  assert.ok(m, 'miss_reasons missing');
  const sum = reasons.reduce((s, r) => s + m[r], 0);
  assert.equal(sum, usage.prompt_tokens - d.cached_tokens);
  const t = m.evicted_by_tier;
  assert.equal(m.evicted, t.device + t.host + t.disk);
  return m;
}

const model = (await client.models.list()).data[0].id;
const prompt = Array.from({ length: 40 }, (_, i) => 300 + ((5 * 7919 + i * 131) % 2700));
let r = await client.completions.create({ model, prompt, max_tokens: 1, temperature: 0 });
let m = checkReasons(r.usage);
assert.equal(m.never_seen, 40);

const edited = [...prompt];
edited[20] = 2999;
r = await client.completions.create({ model, prompt: edited, max_tokens: 1, temperature: 0 });
m = checkReasons(r.usage);
assert.equal(r.usage.prompt_tokens_details.cached_tokens, 16);
assert.equal(m.diverged, 16);
assert.equal(m.never_seen, 8);

const stream = await client.chat.completions.create({
  model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2, stream: true,
  stream_options: { include_usage: true },
});
let usage = null;
for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
assert.ok(usage, 'no usage chunk');
checkReasons(usage);
console.log('miss reasons sdk test: ok');
