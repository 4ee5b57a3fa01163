package io.macfleet.node.engine;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.model.LlamaConfig;
import io.macfleet.node.model.DecoderModel;
import io.macfleet.node.tokenizer.ChatTemplate;
import io.macfleet.node.tokenizer.Tokenizer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One loaded model with its tokenizer, chat template and a KV cache for one sequence. Generations run one at a
 * time (the caller queues); the cache keeps the previous sequence so a prompt sharing its prefix skips that work.
 */
public final class InferenceEngine implements AutoCloseable {
    /** Result of one generation; times in nanoseconds. */
    public record Generation(String text, int promptTokens, int completionTokens, String finishReason,
                             long timeToFirstTokenNanos, long totalNanos, long prefillNanos,
                             List<GenerationOptions.TokenLogprob> logprobs) {
        public Generation(String text, int promptTokens, int completionTokens, String finishReason,
                          long timeToFirstTokenNanos, long totalNanos, long prefillNanos) {
            this(text, promptTokens, completionTokens, finishReason, timeToFirstTokenNanos, totalNanos, prefillNanos,
                    List.of());
        }

        public double decodeTokensPerSecond() {
            long decode = totalNanos - timeToFirstTokenNanos;
            return completionTokens > 1 && decode > 0 ? (completionTokens - 1) * 1e9 / decode : 0;
        }
    }

    private final GgufFile file;
    private final DecoderModel model;
    private final Tokenizer tokenizer;
    private final ChatTemplate template;
    private final KvCache cache;
    private final Placement.ForwardPass forward;
    private final WorkerPool pool;
    private final Set<Integer> stopTokens = new HashSet<>();
    private final List<Integer> cached = new ArrayList<>();
    private final int[] stopTokenArray;
    private final String modelId;

    private InferenceEngine(GgufFile file, Placement.Placed placed, Tokenizer tokenizer, ChatTemplate template,
                            WorkerPool pool, String modelId) {
        this.file = file;
        this.model = placed.model();
        this.cache = placed.cache();
        this.forward = placed.forward();
        this.tokenizer = tokenizer;
        this.template = template;
        this.pool = pool;
        this.modelId = modelId;
        if (tokenizer.eos() >= 0) {
            stopTokens.add(tokenizer.eos());
        }
        long eot = file.integer("tokenizer.ggml.eot_token_id", -1);
        if (eot >= 0 && eot < tokenizer.size()) {
            stopTokens.add((int) eot);
        }
        if (template != null) {
            for (String text : template.stopTokens()) {
                tokenizer.id(text).ifPresent(stopTokens::add);
            }
        }
        stopTokenArray = stopTokens.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Loads a GGUF model. {@code contextLength} 0 means the model's own context length, capped at 4096.
     * The chat template is optional here (completions work without one); chat requests fail clearly without it.
     */
    public static InferenceEngine load(Path path, int contextLength, int threads) throws IOException {
        return load(path, contextLength, threads, Placement.LOCAL);
    }

    /** Loads a GGUF model whose weights and forward pass the placement decides (this node, or a cluster). */
    public static InferenceEngine load(Path path, int contextLength, int threads, Placement placement) throws IOException {
        GgufFile file = GgufFile.open(path);
        WorkerPool pool = null;
        try {
            LlamaConfig config = LlamaConfig.from(file);
            Tokenizer tokenizer = Tokenizer.from(file);
            if (tokenizer.size() != config.vocabulary()) {
                throw file.error("the tokenizer has " + tokenizer.size() + " tokens but the model's vocabulary is "
                        + config.vocabulary());
            }
            ChatTemplate template;
            try {
                template = ChatTemplate.detect(file);
            } catch (RuntimeException e) {
                template = null;
            }
            int context = contextLength > 0 ? contextLength : Math.min(config.contextLength(), 4096);
            pool = new WorkerPool(threads > 0 ? threads : Runtime.getRuntime().availableProcessors());
            String id = path.getFileName().toString().replaceFirst("\\.gguf$", "");
            return new InferenceEngine(file, placement.place(file, config, context, pool), tokenizer, template, pool, id);
        } catch (RuntimeException e) {
            if (pool != null) {
                pool.close();
            }
            file.close();
            throw e;
        }
    }

    public String modelId() {
        return modelId;
    }

    public DecoderModel model() {
        return model;
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    public GgufFile file() {
        return file;
    }

    public int contextLength() {
        return cache.capacity();
    }

    public long kvCacheBytes() {
        return cache.byteSize();
    }

    /** Prompt tokens for a chat; fails with the metadata problem when the model has no usable chat template. */
    public List<Integer> encodeChat(List<ChatTemplate.Message> messages) {
        if (template == null) {
            ChatTemplate.detect(file); // throws the precise reason
        }
        String bos = tokenizer.bos() >= 0 ? tokenizer.token(tokenizer.bos()) : null;
        return tokenizer.encode(template.render(messages, bos), true);
    }

    public List<Integer> encodeCompletion(String prompt) {
        List<Integer> tokens = new ArrayList<>();
        if (tokenizer.addBos() && tokenizer.bos() >= 0) {
            tokens.add(tokenizer.bos());
        }
        tokens.addAll(tokenizer.encode(prompt, false));
        return tokens;
    }

    /**
     * Generates a continuation of {@code prompt}; {@code onText} receives text pieces as they become final (stop
     * sequences held back until ruled out). An exception from {@code onText} aborts the generation.
     */
    public Generation generate(List<Integer> prompt, SamplingParameters parameters, Consumer<String> onText) {
        return generate(prompt, parameters, GenerationOptions.NONE, onText);
    }

    /** The chat template found in the model's metadata, or null when there is none usable. */
    public ChatTemplate template() {
        return template;
    }

    /** Token ids that end a turn. */
    public Set<Integer> stopTokens() {
        return Set.copyOf(stopTokens);
    }

    /**
     * As {@link #generate(List, SamplingParameters, Consumer)}, with a token constraint, log probabilities and
     * penalties. With a constraint the finish reason is "stop" only when the constrained output is complete: a
     * stop sequence or the token limit reached before that gives "length".
     */
    public synchronized Generation generate(List<Integer> prompt, SamplingParameters parameters,
                                            GenerationOptions options, Consumer<String> onText) {
        if (prompt.isEmpty()) {
            throw new IllegalArgumentException("the prompt is empty");
        }
        if (prompt.size() >= cache.capacity()) {
            throw new IllegalArgumentException("the prompt has " + prompt.size() + " tokens, the context holds "
                    + cache.capacity());
        }
        long start = System.nanoTime();
        if (!forward.prefixValid()) {
            cached.clear();
        }
        int reuse = 0;
        while (reuse < cached.size() && reuse < prompt.size() - 1 && cached.get(reuse).equals(prompt.get(reuse))) {
            reuse++;
        }
        cached.subList(reuse, cached.size()).clear();
        int[] tokens = prompt.stream().mapToInt(Integer::intValue).toArray();
        float[] logits = forward(tokens, reuse, tokens.length - reuse, reuse);
        cached.addAll(prompt.subList(reuse, prompt.size()));
        long prefillDone = System.nanoTime();
        Sampler sampler = new Sampler(parameters);
        ByteArrayOutputStream pendingBytes = new ByteArrayOutputStream();
        StringBuilder text = new StringBuilder();
        int emitted = 0;
        int generated = 0;
        long firstToken = 0;
        String finish = "length";
        int maxStop = parameters.stop().stream().mapToInt(String::length).max().orElse(0);
        TokenConstraint constraint = options.constraint();
        List<GenerationOptions.TokenLogprob> logprobs = new ArrayList<>();
        int[] counts = options.presencePenalty() != 0 || options.frequencyPenalty() != 0 ? new int[logits.length] : null;
        while (generated < parameters.maxTokens()) {
            if (counts != null) {
                penalize(logits, counts, options);
            }
            if (constraint != null) {
                if (constraint.mustEnd()) {
                    finish = "stop";
                    break;
                }
                if (!constrain(constraint, logits)) {
                    break; // nothing may follow and the output is not complete: a truncated answer
                }
            }
            int token = sampler.sample(logits);
            if (options.logprobs()) {
                logprobs.add(logprob(logits, token, options.topLogprobs()));
            }
            if (counts != null) {
                counts[token]++;
            }
            generated++;
            if (firstToken == 0) {
                firstToken = System.nanoTime();
            }
            if (stopTokens.contains(token)) {
                generated--; // the end-of-turn token is not part of the completion
                if (options.logprobs()) {
                    logprobs.removeLast();
                }
                finish = "stop";
                break;
            }
            if (constraint != null) {
                constraint.accept(token);
            }
            if (options.logprobs()) {
                options.onLogprob().accept(logprobs.getLast()); // before its text goes out, so a stream can attach it
            }
            pendingBytes.writeBytes(tokenizer.decode(token));
            byte[] bytes = pendingBytes.toByteArray();
            int complete = completeUtf8Length(bytes);
            text.append(new String(bytes, 0, complete, StandardCharsets.UTF_8));
            pendingBytes.reset();
            pendingBytes.write(bytes, complete, bytes.length - complete);
            int stopAt = findStop(text, parameters.stop(), Math.max(0, emitted - maxStop));
            if (stopAt >= 0) {
                text.setLength(stopAt);
                finish = constraint == null || constraint.canEnd() ? "stop" : "length";
                break;
            }
            int safe = text.length() - heldBack(text, parameters.stop());
            if (safe > emitted) {
                onText.accept(text.substring(emitted, safe));
                emitted = safe;
            }
            if (generated >= parameters.maxTokens() || cached.size() >= cache.capacity()) {
                break;
            }
            logits = forward(new int[]{token}, 0, 1, cached.size());
            cached.add(token);
        }
        if (pendingBytes.size() > 0 && !finish.equals("stop")) {
            text.append(pendingBytes.toString(StandardCharsets.UTF_8)); // an unfinished UTF-8 sequence at the end
        }
        if (text.length() > emitted) {
            onText.accept(text.substring(emitted));
        }
        long end = System.nanoTime();
        return new Generation(text.toString(), prompt.size(), generated, finish,
                firstToken == 0 ? end - start : firstToken - start, end - start, prefillDone - start,
                List.copyOf(logprobs));
    }

    /** Masks the logits by the constraint; end-of-turn tokens stay allowed only where the output is complete. */
    private boolean constrain(TokenConstraint constraint, float[] logits) {
        boolean canEnd = constraint.canEnd();
        float[] stops = new float[stopTokenArray.length];
        for (int i = 0; i < stops.length; i++) {
            stops[i] = logits[stopTokenArray[i]];
        }
        boolean any = constraint.mask(logits);
        if (canEnd) {
            for (int i = 0; i < stops.length; i++) {
                logits[stopTokenArray[i]] = stops[i];
            }
        }
        return any || canEnd;
    }

    private static void penalize(float[] logits, int[] counts, GenerationOptions options) {
        for (int id = 0; id < counts.length; id++) {
            if (counts[id] > 0) {
                logits[id] -= options.presencePenalty() + options.frequencyPenalty() * counts[id];
            }
        }
    }

    /** Log-softmax of the (masked, penalized) logits before temperature: the model's own distribution. */
    private GenerationOptions.TokenLogprob logprob(float[] logits, int token, int top) {
        double max = Double.NEGATIVE_INFINITY;
        for (float logit : logits) {
            max = Math.max(max, logit);
        }
        double sum = 0;
        for (float logit : logits) {
            sum += Math.exp(logit - max);
        }
        double logSum = max + Math.log(sum);
        List<GenerationOptions.TokenLogprob> alternatives = new ArrayList<>();
        if (top > 0) {
            int[] best = new int[Math.min(top, logits.length)];
            int filled = 0;
            for (int id = 0; id < logits.length; id++) {
                if (logits[id] == Float.NEGATIVE_INFINITY
                        || (filled == best.length && logits[id] <= logits[best[best.length - 1]])) {
                    continue;
                }
                int at = filled < best.length ? filled++ : best.length - 1;
                while (at > 0 && logits[best[at - 1]] < logits[id]) {
                    best[at] = best[at - 1];
                    at--;
                }
                best[at] = id;
            }
            for (int i = 0; i < filled; i++) {
                alternatives.add(new GenerationOptions.TokenLogprob(best[i], tokenizer.decode(best[i]),
                        logits[best[i]] - logSum, List.of()));
            }
        }
        return new GenerationOptions.TokenLogprob(token, tokenizer.decode(token), logits[token] - logSum,
                List.copyOf(alternatives));
    }

    private float[] forward(int[] tokens, int from, int count, int position) {
        try {
            return forward.forward(tokens, from, count, position);
        } catch (RuntimeException e) {
            cached.clear(); // a failed step leaves the KV cache (here or on other ranks) in an unknown state
            throw e;
        }
    }

    private static int findStop(CharSequence text, List<String> stops, int from) {
        int best = -1;
        for (String stop : stops) {
            int at = text.toString().indexOf(stop, from);
            if (at >= 0 && (best < 0 || at < best)) {
                best = at;
            }
        }
        return best;
    }

    /** Length of the longest suffix of text that is a proper prefix of a stop sequence. */
    private static int heldBack(CharSequence text, List<String> stops) {
        int held = 0;
        for (String stop : stops) {
            for (int length = Math.min(stop.length() - 1, text.length()); length > held; length--) {
                if (stop.startsWith(text.subSequence(text.length() - length, text.length()).toString())) {
                    held = length;
                    break;
                }
            }
        }
        return held;
    }

    /** Bytes at the start of {@code bytes} that form complete UTF-8 sequences. */
    static int completeUtf8Length(byte[] bytes) {
        int n = bytes.length;
        for (int back = 1; back <= Math.min(3, n); back++) {
            int b = bytes[n - back] & 0xFF;
            if ((b & 0xC0) == 0x80) {
                continue; // continuation byte
            }
            int needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            return needed > back ? n - back : n;
        }
        return n;
    }

    @Override
    public void close() {
        pool.close();
        file.close();
    }
}
