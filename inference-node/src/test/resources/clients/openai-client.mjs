// Drives a running inference node with the official OpenAI Node client (npm "openai"): every answer goes through
// the client's own parsing and stream accumulation. Usage: node openai-client.mjs BASE_URL MODEL_ID
// (run from a directory whose node_modules holds "openai"). Exits non-zero on the first failed check.
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + '/v1', apiKey: 'not-needed', maxRetries: 0 });
const completions = client.chat.completions;
const streamHelper = (completions.stream ? completions : client.beta.chat.completions);

// no free strings, so the random test model's forced calls finish within the token limit
const forecast = {
  type: 'function',
  function: {
    name: 'get_forecast', description: 'Forecast',
    parameters: { type: 'object', additionalProperties: false, required: ['days', 'unit'],
      properties: { days: { type: 'integer' }, unit: { enum: ['celsius', 'fahrenheit'] } } },
  },
};
const weather = {
  type: 'function',
  function: {
    name: 'get_weather', description: 'Weather of a city',
    parameters: { type: 'object', additionalProperties: false, required: ['city', 'unit'],
      properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] } } },
  },
};

const retrieved = await client.models.retrieve(model);
assert.equal(retrieved.id, model);
const listed = await client.models.list();
assert.equal(listed.data[0].id, model);

await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
  (error) => error instanceof OpenAI.NotFoundError && error.code === 'model_not_found');
await assert.rejects(client.chat.completions.create({ model, max_tokens: 1.5, messages: [{ role: 'user', content: 'x' }] }),
  (error) => error instanceof OpenAI.BadRequestError && error.param === 'max_tokens');

// structured output: a complete answer parses and has the schema's fields
const schema = { type: 'object', additionalProperties: false, required: ['title', 'year'],
  properties: { title: { type: 'string' }, year: { type: 'integer' } } };
let complete = 0;
for (let seed = 1; seed <= 4; seed++) {
  const answer = await completions.create({ model, seed, max_tokens: 120, messages: [{ role: 'user', content: 'A film?' }],
    response_format: { type: 'json_schema', json_schema: { name: 'film', strict: true, schema } } });
  assert.ok(answer.system_fingerprint.startsWith('fp_'));
  if (answer.choices[0].finish_reason === 'stop') {
    complete++;
    const film = JSON.parse(answer.choices[0].message.content);
    assert.equal(typeof film.title, 'string');
    assert.ok(Number.isInteger(film.year));
  }
}
assert.ok(complete > 0, 'some structured answers complete');

// a forced tool call, whole and streamed through the client's accumulator
const forced = await completions.create({ model, seed: 2, max_tokens: 120, tools: [weather, forecast], parallel_tool_calls: false,
  tool_choice: { type: 'function', function: { name: 'get_forecast' } },
  messages: [{ role: 'user', content: 'Weather in Paris?' }] });
assert.equal(forced.choices[0].finish_reason, 'tool_calls');
{
  const call = forced.choices[0].message.tool_calls[0];
  assert.equal(call.function.name, 'get_forecast');
  const args = JSON.parse(call.function.arguments);
  assert.ok(['celsius', 'fahrenheit'].includes(args.unit));
  assert.ok(Number.isInteger(args.days));
  // the call and its result back into the conversation
  const followUp = await completions.create({ model, max_tokens: 8, tools: [weather], tool_choice: 'none', messages: [
    { role: 'user', content: 'Weather in Paris?' }, forced.choices[0].message,
    { role: 'tool', tool_call_id: call.id, content: '18 degrees' }] });
  assert.equal(followUp.object, 'chat.completion');
}
const runner = streamHelper.stream({ model, seed: 2, max_tokens: 120, tools: [forecast], tool_choice: 'required',
  parallel_tool_calls: false,
  stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
const streamed = await runner.finalChatCompletion();
assert.equal(streamed.choices[0].finish_reason, 'tool_calls');
{
  const call = streamed.choices[0].message.tool_calls[0];
  assert.equal(call.function.name, 'get_forecast');
  assert.ok(Number.isInteger(JSON.parse(call.function.arguments).days));
}
assert.ok(streamed.usage && streamed.usage.completion_tokens >= 1, 'usage arrives with include_usage');

// streamed log probabilities, accumulated by the client's stream helper
const streamedLogprobs = await streamHelper.stream({ model, seed: 4, max_tokens: 6, logprobs: true, top_logprobs: 2,
  stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] }).finalChatCompletion();
assert.equal(streamedLogprobs.choices[0].logprobs.content.length, streamedLogprobs.usage.completion_tokens);

// plain streaming: text chunks, no usage unless asked
let text = '';
let usageSeen = false;
for await (const chunk of await completions.create({ model, stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] })) {
  text += chunk.choices[0]?.delta?.content ?? '';
  usageSeen ||= chunk.usage != null;
}
assert.equal(usageSeen, false);

// n, logprobs, penalties, legacy completions
const several = await completions.create({ model, n: 2, seed: 3, max_tokens: 5, logprobs: true, top_logprobs: 2,
  presence_penalty: 0.5, frequency_penalty: 0.5, messages: [{ role: 'user', content: 'Hi' }] });
assert.equal(several.choices.length, 2);
assert.ok(several.choices[0].logprobs.content.length > 0);
const legacy = await client.completions.create({ model, prompt: 'Once', max_tokens: 4, logprobs: 1 });
assert.equal(legacy.choices[0].logprobs.tokens.length, legacy.usage.completion_tokens);
console.log('openai client: all checks passed');
