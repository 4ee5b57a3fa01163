package io.macfleet.node.model;

import io.macfleet.node.kernel.Kernels;
import io.macfleet.node.kernel.WeightMatrix;
import io.macfleet.node.kernel.WorkerPool;

/**
 * The Llama-family forward pass: RMSNorm, RoPE (interleaved or half rotation, Llama 3 frequency factors, linear
 * scaling), grouped-query attention over the KV cache, SwiGLU FFN. A prompt is processed as a batch: every
 * projection is one matrix-matrix product over all its tokens; only attention walks token by token.
 */
public final class LlamaModel implements DecoderModel {
    /** Prompt tokens per batch: bounds scratch memory while amortising each weight read over many tokens. */
    public static final int MAX_BATCH = 128;

    private final LlamaConfig config;
    private final LlamaWeights weights;
    private final WorkerPool pool;
    private final float[] inverseFrequencies;
    /** Sums the partial attention and FFN outputs of tensor-parallel ranks; identity on one node. */
    private Collective collective = Collective.NONE;
    /** The mixture-of-experts FFN block, null for a dense model. */
    private final MixtureOfExperts experts;
    /** Activation buffers, reused across calls (one forward pass at a time) so prefill makes no garbage. */
    private float[] x, normed, q, k, v, attention, projected, gate, up;
    /** This rank's rows of the logits when the output matrix is split by vocabulary (tensor parallelism). */
    private float[] logitRows;
    private int scratchTokens;
    /** Attention scores, one row per worker. */
    private float[][] scores;
    /** With an F16 KV cache, one KV head's keys and values in F32, per worker. */
    private float[][] keyScratch, valueScratch;
    /** Wall and calling-thread CPU nanoseconds per {@link Phase}, accumulated while not null (the bench's decode breakdown). */
    private long[] profile;

    /** Parts of a forward pass, timed by {@link #profile(long[])}. */
    public enum Phase {
        EMBEDDING("embedding row"), ATTENTION_NORM("attention RMSNorm"), QKV("Q/K/V products"),
        ROPE_CACHE("RoPE + KV cache write"), ATTENTION("attention (scores, softmax, values)"),
        ATTENTION_OUTPUT("attention output product"), RESIDUAL("residual adds"), FFN_NORM("FFN RMSNorm"),
        GATE_UP("gate/up products"), SWIGLU("SwiGLU"), DOWN("down product"), OUTPUT_NORM("output RMSNorm"),
        LOGITS("output (logits) product"), EXPERTS("expert router and FFNs"),
        LOGITS_GATHER("logits gathered from the ranks");

        private final String label;

        Phase(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * Accumulates the wall time of each {@link Phase} into {@code nanos[phase.ordinal()]} and the calling thread's CPU
     * time into {@code nanos[phases + phase.ordinal()]} (2 x phases entries); null stops.
     */
    public void profile(long[] nanos) {
        this.profile = nanos;
        this.profileCpu = true;
        this.lastCpu = nanos == null ? 0 : THREADS.getCurrentThreadCpuTime();
    }

    /**
     * As {@link #profile}, wall time only, so {@code nanos} needs one slot per {@link Phase}. Reading a platform
     * thread's CPU clock is a system call that took 1.7 us quiet and, after heavy memory traffic, 48 us on average and
     * up to 4 ms on this VM (a virtual thread's returns -1 at once): at about 200 reads per token it slowed the one
     * tensor rank that runs on a platform thread by 10-20 ms per token, which its peers then waited for.
     */
    public void profileWall(long[] nanos) {
        this.profile = nanos;
        this.profileCpu = false;
    }

    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();
    private long lastCpu;
    private boolean profileCpu;

    private long mark(Phase phase, long since) {
        if (profile == null) {
            return 0;
        }
        long now = System.nanoTime();
        profile[phase.ordinal()] += now - since;
        if (profileCpu) {
            long cpu = THREADS.getCurrentThreadCpuTime();
            profile[Phase.values().length + phase.ordinal()] += cpu - lastCpu;
            lastCpu = cpu;
            return System.nanoTime(); // the clock read is not the next phase's time
        }
        return now;
    }

    private long now() {
        if (profile == null) {
            return 0;
        }
        lastCpu = THREADS.getCurrentThreadCpuTime();
        return System.nanoTime();
    }

    public LlamaModel(LlamaWeights weights, WorkerPool pool) {
        this.config = weights.config();
        this.weights = weights;
        this.pool = pool;
        this.inverseFrequencies = ropeFrequencies(config, weights.ropeFrequencyFactors());
        this.experts = config.mixtureOfExperts() ? new MixtureOfExperts(config.dimension(), config.expertFeedForward()) : null;
    }

    public LlamaConfig config() {
        return config;
    }

    /**
     * Tensor parallelism: each rank computes a column slice of the attention output and down projections, so
     * their outputs are partial sums that the ranks add up before the residual.
     */
    @FunctionalInterface
    public interface Collective {
        Collective NONE = (values, length) -> { };

        /** Replaces {@code values[0, length)} with the sum of every rank's values, identical on all ranks. */
        void allReduce(float[] values, int length);

        /**
         * Vocabulary-parallel output matrix: the first vocabulary row of this rank's output matrix (which holds
         * {@code weights().output().rows()} rows). 0 on one node.
         */
        default int firstVocabularyRow() {
            return 0;
        }

        /**
         * Completes logits of which this rank computed its own vocabulary rows: rank 0 receives the other ranks'
         * rows into place, the others send theirs. Nothing on one node.
         */
        default void gatherLogits(float[] logits) {
        }
    }

    public void collective(Collective collective) {
        this.collective = collective == null ? Collective.NONE : collective;
    }

    public LlamaWeights weights() {
        return weights;
    }

    @Override
    public long bytesPerToken() {
        return weights.bytesPerToken();
    }

    @Override
    public java.util.List<java.lang.foreign.MemorySegment> decodeWeights() {
        java.util.List<java.lang.foreign.MemorySegment> segments = new java.util.ArrayList<>();
        for (LayerWeights block : weights.blocks()) {
            for (WeightMatrix m : java.util.List.of(block.query(), block.key(), block.value(), block.output())) {
                segments.add(m.data().asSlice(0, m.byteSize()));
            }
            if (block.experts() != null) {
                continue; // which experts a token reads depends on the token; the bandwidth stream reads the dense parts
            }
            for (WeightMatrix m : java.util.List.of(block.gate(), block.up(), block.down())) {
                segments.add(m.data().asSlice(0, m.byteSize()));
            }
        }
        segments.add(weights.output().data().asSlice(0, weights.output().byteSize()));
        return segments;
    }

    @Override
    public long kvValuesPerPosition() {
        return 2L * weights.blocks().length * config.kvDimension();
    }

    @Override
    public long multiHeadKvValuesPerPosition() {
        return 2L * weights.blocks().length * config.queryDimension();
    }

    @Override
    public KvCache allocateCache(int contextLength) {
        return KvCache.allocate(config.stage(weights.blocks().length), contextLength);
    }

    /** Per-pair RoPE frequencies after scaling (rope_freqs tensor, llama3 or linear metadata). */
    static float[] ropeFrequencies(LlamaConfig config, float[] factors) {
        int pairs = config.ropeDimensions() / 2;
        float[] frequencies = new float[pairs];
        for (int i = 0; i < pairs; i++) {
            double frequency = 1.0 / Math.pow(config.ropeTheta(), (2.0 * i) / config.ropeDimensions());
            if (factors != null) {
                frequency /= factors[i];
            } else if (config.ropeScalingType().equals("linear")) {
                frequency /= config.ropeScalingFactor();
            } else if (config.ropeScalingType().equals("llama3")) {
                double lowWavelength = config.ropeOriginalContext() / config.ropeLowFrequencyFactor();
                double highWavelength = config.ropeOriginalContext() / config.ropeHighFrequencyFactor();
                double wavelength = 2 * Math.PI / frequency;
                if (wavelength > lowWavelength) {
                    frequency /= config.ropeScalingFactor();
                } else if (wavelength >= highWavelength) {
                    double smooth = (config.ropeOriginalContext() / wavelength - config.ropeLowFrequencyFactor())
                            / (config.ropeHighFrequencyFactor() - config.ropeLowFrequencyFactor());
                    frequency = (1 - smooth) * frequency / config.ropeScalingFactor() + smooth * frequency;
                }
            }
            frequencies[i] = (float) frequency;
        }
        return frequencies;
    }

    /**
     * Runs {@code count} tokens starting at cache position {@code position} and returns the logits of the last one.
     */
    public float[] forward(int[] tokens, int from, int count, int position, KvCache cache) {
        return forward(tokens, from, count, position, cache, true);
    }

    /** As {@link #forward(int[], int, int, int, KvCache)}; without logits (null) when {@code logits} is false. */
    public float[] forward(int[] tokens, int from, int count, int position, KvCache cache, boolean logits) {
        if (position + count > cache.capacity()) {
            throw new IllegalArgumentException("positions " + position + ".." + (position + count)
                    + " exceed the context of " + cache.capacity() + " tokens");
        }
        float[] last = null;
        for (int done = 0; done < count; done += MAX_BATCH) {
            int batch = Math.min(MAX_BATCH, count - done);
            last = forwardBatch(tokens, from + done, null, batch, position + done, cache, logits && done + batch == count);
        }
        return last;
    }

    /**
     * One pipeline stage over at most {@link #MAX_BATCH} positions: this stage's layers run on {@code hidden}
     * ({@code count} hidden states of {@code dimension} floats), or on the embeddings of {@code tokens[from..]} when
     * hidden is null (the first stage). Returns the resulting hidden states: scratch of this model, valid until
     * the next call.
     */
    public float[] forwardStage(int[] tokens, int from, float[] hidden, int count, int position, KvCache cache) {
        if (count > MAX_BATCH || position + count > cache.capacity()) {
            throw new IllegalArgumentException("stage batch of " + count + " at position " + position
                    + " exceeds the batch limit " + MAX_BATCH + " or the context of " + cache.capacity());
        }
        forwardBatch(tokens, from, hidden, count, position, cache, false);
        return x;
    }

    /** Logits of the hidden state at {@code hidden[offset, offset + dimension)}: output RMSNorm and output matrix. */
    public float[] logits(float[] hidden, int offset) {
        int dim = config.dimension();
        float[] lastToken = new float[dim];
        float[] lastHidden = java.util.Arrays.copyOfRange(hidden, offset, offset + dim);
        rmsNorm(lastHidden, weights.outputNorm(), lastToken, 1, dim);
        float[] result = new float[config.vocabulary()];
        Kernels.matvec(pool, weights.output(), lastToken, result);
        return result;
    }

    private float[] forwardBatch(int[] tokens, int from, float[] hidden, int batch, int position, KvCache cache,
                                 boolean logits) {
        int dim = config.dimension();
        int qDim = config.queryDimension();
        int kvDim = config.kvDimension();
        int ffn = config.feedForward();
        ensureScratch(batch);
        float[] x = this.x, normed = this.normed, q = this.q, k = this.k, v = this.v, attention = this.attention,
                projected = this.projected, gate = this.gate, up = this.up;
        long time = now();
        if (hidden != null) {
            System.arraycopy(hidden, 0, x, 0, batch * dim);
        }
        for (int t = 0; hidden == null && t < batch; t++) {
            int token = tokens[from + t];
            if (token < 0 || token >= config.vocabulary()) {
                throw new IllegalArgumentException("token id " + token + " outside the vocabulary of " + config.vocabulary());
            }
            Kernels.dequantizeRow(weights.tokenEmbedding(), token, x, t * dim);
        }
        time = mark(Phase.EMBEDDING, time);
        for (LayerWeights layer : weights.blocks()) {
            rmsNorm(x, layer.attentionNorm(), normed, batch, dim);
            time = mark(Phase.ATTENTION_NORM, time);
            if (batch == 1) {
                Kernels.matvec(pool, new WeightMatrix[] {layer.query(), layer.key(), layer.value()}, normed,
                        new float[][] {q, k, v});
            } else {
                Kernels.matmul(pool, layer.query(), normed, batch, q);
                Kernels.matmul(pool, layer.key(), normed, batch, k);
                Kernels.matmul(pool, layer.value(), normed, batch, v);
            }
            addBias(q, layer.queryBias(), batch);
            addBias(k, layer.keyBias(), batch);
            addBias(v, layer.valueBias(), batch);
            time = mark(Phase.QKV, time);
            if (layer.queryNorm() != null) {
                rmsNorm(q, layer.queryNorm(), q, batch * config.heads(), config.headDimension());
            }
            if (layer.keyNorm() != null) {
                rmsNorm(k, layer.keyNorm(), k, batch * config.kvHeads(), config.headDimension());
            }
            for (int t = 0; t < batch; t++) {
                rope(q, t * qDim, config.heads(), position + t);
                rope(k, t * kvDim, config.kvHeads(), position + t);
            }
            int layerIndex = layer.index() - weights.layers().first();
            cache.store(layerIndex, k, v, position, batch);
            time = mark(Phase.ROPE_CACHE, time);
            attend(q, attention, cache, layerIndex, batch, position);
            time = mark(Phase.ATTENTION, time);
            Kernels.matmul(pool, layer.output(), attention, batch, projected);
            collective.allReduce(projected, batch * dim);
            time = mark(Phase.ATTENTION_OUTPUT, time);
            add(x, projected, batch * dim);
            time = mark(Phase.RESIDUAL, time);
            rmsNorm(x, layer.ffnNorm(), normed, batch, dim);
            time = mark(Phase.FFN_NORM, time);
            if (layer.experts() != null) {
                experts.forward(pool, layer.experts(), normed, batch, projected);
                collective.allReduce(projected, batch * dim); // expert parallelism: each rank added its experts only
                time = mark(Phase.EXPERTS, time);
                add(x, projected, batch * dim);
                time = mark(Phase.RESIDUAL, time);
                continue;
            }
            if (batch == 1) {
                Kernels.matvec(pool, new WeightMatrix[] {layer.gate(), layer.up()}, normed, new float[][] {gate, up});
            } else {
                Kernels.matmul(pool, layer.gate(), normed, batch, gate);
                Kernels.matmul(pool, layer.up(), normed, batch, up);
            }
            time = mark(Phase.GATE_UP, time);
            Kernels.swiglu(gate, up, batch * ffn);
            time = mark(Phase.SWIGLU, time);
            Kernels.matmul(pool, layer.down(), gate, batch, projected);
            collective.allReduce(projected, batch * dim);
            time = mark(Phase.DOWN, time);
            add(x, projected, batch * dim);
            time = mark(Phase.RESIDUAL, time);
        }
        if (!logits) {
            return null;
        }
        float[] lastToken = new float[dim];
        float[] lastHidden = java.util.Arrays.copyOfRange(x, (batch - 1) * dim, batch * dim);
        rmsNorm(lastHidden, weights.outputNorm(), lastToken, 1, dim);
        time = mark(Phase.OUTPUT_NORM, time);
        float[] result = new float[config.vocabulary()];
        WeightMatrix output = weights.output();
        if (output.rows() == result.length) {
            Kernels.matvec(pool, output, lastToken, result);
        } else {
            if (logitRows == null || logitRows.length != output.rows()) {
                logitRows = new float[output.rows()];
            }
            Kernels.matvec(pool, output, lastToken, logitRows);
            System.arraycopy(logitRows, 0, result, collective.firstVocabularyRow(), logitRows.length);
        }
        time = mark(Phase.LOGITS, time);
        collective.gatherLogits(result);
        mark(Phase.LOGITS_GATHER, time);
        return result;
    }

    private void ensureScratch(int batch) {
        if (batch <= scratchTokens) {
            return;
        }
        int dim = config.dimension();
        x = new float[batch * dim];
        normed = new float[batch * dim];
        q = new float[batch * config.queryDimension()];
        k = new float[batch * config.kvDimension()];
        v = new float[batch * config.kvDimension()];
        attention = new float[batch * config.queryDimension()];
        projected = new float[batch * dim];
        gate = new float[batch * config.feedForward()];
        up = new float[batch * config.feedForward()];
        scratchTokens = batch;
    }

    private void attend(float[] q, float[] out, KvCache cache, int layer, int batch, int position) {
        int heads = config.heads();
        int kvHeads = config.kvHeads();
        int headDim = config.headDimension();
        int qDim = config.queryDimension();
        int group = heads / kvHeads;
        float scale = (float) (1.0 / Math.sqrt(headDim));
        boolean half = cache.half();
        float[] keys = half ? null : cache.keys[layer], values = half ? null : cache.values[layer];
        int scoreStride = cache.paddedPositions;
        if (scores == null || scores.length < pool.size() || scores[0].length < group * scoreStride) {
            scores = new float[pool.size()][group * scoreStride];
        }
        if (half && (keyScratch == null || keyScratch.length < pool.size() || keyScratch[0].length < cache.headEntries())) {
            keyScratch = new float[pool.size()][cache.headEntries()];
            valueScratch = new float[pool.size()][cache.headEntries()];
        }
        float[][] scores = this.scores, keyScratch = this.keyScratch, valueScratch = this.valueScratch;
        pool.parallelFor(batch * kvHeads, (start, end, worker) -> {
            for (int item = start; item < end; item++) {
                int t = item / kvHeads;
                int kvHead = item % kvHeads;
                int qOffset = t * qDim + kvHead * group * headDim;
                if (half) {
                    int length = position + t + 1;
                    cache.expand(layer, kvHead, length, keyScratch[worker], valueScratch[worker]);
                    Attention.attendGroup(q, qOffset, group, headDim, scale, keyScratch[worker], 0, valueScratch[worker], 0,
                            headDim, length, out, qOffset, scores[worker], scoreStride);
                    continue;
                }
                Attention.attendGroup(q, qOffset, group, headDim, scale, keys, cache.keyBase(kvHead), values,
                        cache.valueBase(kvHead), headDim, position + t + 1, out, qOffset, scores[worker], scoreStride);
            }
        });
    }

    private void rope(float[] vectors, int offset, int heads, int position) {
        int headDim = config.headDimension();
        int pairs = config.ropeDimensions() / 2;
        for (int i = 0; i < pairs; i++) {
            double angle = position * (double) inverseFrequencies[i];
            float cos = (float) Math.cos(angle);
            float sin = (float) Math.sin(angle);
            for (int h = 0; h < heads; h++) {
                int base = offset + h * headDim;
                int a = config.ropeHalves() ? base + i : base + 2 * i;
                int b = config.ropeHalves() ? base + i + pairs : base + 2 * i + 1;
                float x0 = vectors[a];
                float x1 = vectors[b];
                vectors[a] = x0 * cos - x1 * sin;
                vectors[b] = x0 * sin + x1 * cos;
            }
        }
    }

    private void rmsNorm(float[] in, float[] weight, float[] out, int rows, int size) {
        for (int r = 0; r < rows; r++) {
            int offset = r * size;
            float sumOfSquares = Kernels.dot(in, offset, in, offset, size);
            float inverse = (float) (1.0 / Math.sqrt(sumOfSquares / size + config.rmsEpsilon()));
            for (int i = 0; i < size; i++) {
                out[offset + i] = in[offset + i] * inverse * weight[i];
            }
        }
    }

    private static void addBias(float[] values, float[] bias, int batch) {
        if (bias == null) {
            return;
        }
        for (int t = 0; t < batch; t++) {
            for (int i = 0; i < bias.length; i++) {
                values[t * bias.length + i] += bias[i];
            }
        }
    }

    private static void add(float[] target, float[] addend, int length) {
        for (int i = 0; i < length; i++) {
            target[i] += addend[i];
        }
    }
}
