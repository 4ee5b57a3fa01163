package io.macfleet.node.grammar;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.GenerationOptions;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.generator.ModelGenerator;
import io.macfleet.node.generator.QuantizationMix;
import io.macfleet.node.gguf.GgmlType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The two figures, printed (skipped unless -Dmacfleet.benchmarks=true):
 * the constraint's set-up for a 20-property schema on a 150k-token vocabulary, and decode tokens/s with a JSON
 * Schema constraint against without on the same model, prompt and seed (-Dmacfleet.benchmark.model=FILE, default
 * the generated small preset).
 */
class ConstraintBenchmark {
    private static final int RUNS = Integer.getInteger("macfleet.benchmark.runs", 7);

    static Object twentyProperties() {
        Map<String, Object> properties = new LinkedHashMap<>();
        String[] types = {"string", "integer", "number", "boolean"};
        for (int i = 0; i < 20; i++) {
            properties.put("field_" + i, i % 5 == 4 ? Map.of("enum", List.of("alpha", "beta", "gamma"))
                    : Map.of("type", types[i % 4]));
        }
        return Map.of("type", "object", "additionalProperties", false, "required", new ArrayList<>(properties.keySet()),
                "properties", properties);
    }

    /** 256 byte tokens and byte strings of 2-12 characters, shaped like a byte-level BPE vocabulary's. */
    static byte[][] vocabulary(int size) {
        Random random = new Random(42);
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;\"{}[]()'";
        byte[][] tokens = new byte[size][];
        for (int i = 0; i < 256; i++) {
            tokens[i] = new byte[]{(byte) i};
        }
        for (int i = 256; i < size; i++) {
            StringBuilder token = new StringBuilder(random.nextInt(3) == 0 ? " " : "");
            int length = 2 + random.nextInt(11);
            boolean letters = random.nextInt(10) < 8;
            while (token.length() < length) {
                token.append(letters ? alphabet.charAt(random.nextInt(52)) : alphabet.charAt(random.nextInt(alphabet.length())));
            }
            tokens[i] = token.toString().getBytes(StandardCharsets.UTF_8);
        }
        return tokens;
    }

    @Test
    void constraintSetUpOnA150kVocabulary() {
        Assumptions.assumeTrue(Boolean.getBoolean("macfleet.benchmarks"), "benchmarks run with -Dmacfleet.benchmarks=true");
        byte[][] tokens = vocabulary(150_000);
        long[] trieNanos = new long[RUNS];
        long[] buildNanos = new long[RUNS];
        long[] stringMaskNanos = new long[RUNS];
        TokenTrie trie = null;
        for (int run = 0; run < RUNS; run++) {
            long start = System.nanoTime();
            trie = TokenTrie.build(tokens);
            trieNanos[run] = System.nanoTime() - start;
            start = System.nanoTime();
            GrammarConstraint constraint = new GrammarConstraint(SchemaCompiler.compile(twentyProperties()), trie, id -> tokens[id]);
            constraint.allowed();
            buildNanos[run] = System.nanoTime() - start;
            constraint.acceptBytes("{\"field_0\":\"".getBytes(StandardCharsets.UTF_8));
            start = System.nanoTime();
            int inString = constraint.allowed().cardinality();
            stringMaskNanos[run] = System.nanoTime() - start;
            if (run == 0) {
                System.out.printf("vocabulary %d tokens, trie %d nodes; tokens allowed inside a string: %d%n",
                        tokens.length, trie.nodes(), inString);
            }
        }
        System.out.printf("RESULT trie build (once per model) median %.1f ms%n", median(trieNanos) / 1e6);
        System.out.printf("RESULT constraint build (schema compile + first mask) median %.1f ms%n", median(buildNanos) / 1e6);
        System.out.printf("RESULT mask inside a string (the widest state, uncached) median %.1f ms%n", median(stringMaskNanos) / 1e6);
    }

    @Test
    void decodeWithAndWithoutASchema() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("macfleet.benchmarks"), "benchmarks run with -Dmacfleet.benchmarks=true");
        String file = System.getProperty("macfleet.benchmark.model");
        Path model = file != null ? Path.of(file)
                : TestModels.small(ModelGenerator.Architecture.LLAMA, QuantizationMix.of(GgmlType.Q8_0));
        Node grammar = SchemaCompiler.compile(twentyProperties());
        try (InferenceEngine engine = InferenceEngine.load(model, 1024, 0)) {
            List<Integer> prompt = engine.encodeCompletion("Fill in the form as JSON:");
            double[] free = new double[RUNS];
            double[] overhead = new double[RUNS];
            double[] constrained = new double[RUNS];
            for (int run = 0; run < RUNS; run++) {
                // interleaved, so a change in the machine's load hits both alike; sampled (the same seed), since
                // the random model's greedy choice after this prompt is the end of text
                SamplingParameters sampling = new SamplingParameters(1, 0, 1, 0, 1L + run, 64, List.of());
                InferenceEngine.Generation plain = engine.generate(prompt, sampling, GenerationOptions.NONE, t -> { });
                TimedConstraint timed = new TimedConstraint(new GrammarConstraint(grammar, engine.tokenizer()));
                InferenceEngine.Generation json = engine.generate(prompt, sampling,
                        new GenerationOptions(timed, -1, 0, 0), t -> { });
                overhead[run] = timed.nanos / 1e6 / Math.max(1, json.completionTokens());
                free[run] = plain.decodeTokensPerSecond();
                constrained[run] = json.decodeTokensPerSecond();
                System.out.printf("run %d: without %.1f tokens/s (%d tokens), with schema %.1f tokens/s (%d tokens, %s), "
                        + "constraint work %.3f ms per token%n", run, free[run], plain.completionTokens(), constrained[run],
                        json.completionTokens(), json.finishReason(), overhead[run]);
            }
            double withoutMedian = median(free);
            double withMedian = median(constrained);
            System.out.printf("RESULT model %s vocabulary %d: decode without %.1f tokens/s, with a 20-property schema "
                    + "%.1f tokens/s, ratio %.2f%n", model.getFileName(), engine.tokenizer().size(), withoutMedian,
                    withMedian, withMedian / withoutMedian);
            System.out.printf("RESULT constraint work (mask, accept) median %.3f ms per token = %.1f%% of a decode step "
                    + "without it%n", median(overhead), median(overhead) / (1000 / withoutMedian) * 100);
        }
    }

    private static double median(long[] values) {
        long[] copy = values.clone();
        Arrays.sort(copy);
        return copy[copy.length / 2];
    }

    private static double median(double[] values) {
        double[] copy = values.clone();
        Arrays.sort(copy);
        return copy[copy.length / 2];
    }

    /** Counts the time the engine spends in the constraint: its whole cost per token, apart from the noise. */
    static final class TimedConstraint implements io.macfleet.node.engine.TokenConstraint {
        private final io.macfleet.node.engine.TokenConstraint inner;
        long nanos;

        TimedConstraint(io.macfleet.node.engine.TokenConstraint inner) {
            this.inner = inner;
        }

        @Override
        public boolean mask(float[] logits) {
            long start = System.nanoTime();
            boolean any = inner.mask(logits);
            nanos += System.nanoTime() - start;
            return any;
        }

        @Override
        public void accept(int token) {
            long start = System.nanoTime();
            inner.accept(token);
            nanos += System.nanoTime() - start;
        }

        @Override
        public boolean canEnd() {
            long start = System.nanoTime();
            boolean can = inner.canEnd();
            nanos += System.nanoTime() - start;
            return can;
        }

        @Override
        public boolean mustEnd() {
            long start = System.nanoTime();
            boolean must = inner.mustEnd();
            nanos += System.nanoTime() - start;
            return must;
        }
    }
}
