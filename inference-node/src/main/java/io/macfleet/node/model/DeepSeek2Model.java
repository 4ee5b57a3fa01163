package io.macfleet.node.model;

import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.Kernels;
import io.macfleet.node.kernel.WeightMatrix;
import io.macfleet.node.kernel.WorkerPool;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The DeepSeek V2/V3 forward pass (llama.cpp's deepseek2 graph with multi-head latent attention).
 * <p>
 * Attention: the query through a low-rank pair ({@code attn_q_a}, RMSNorm, {@code attn_q_b}) or {@code attn_q};
 * per token one compressed row {@code attn_kv_a_mqa}: {@code kv_lora_rank} latent values (RMSNorm) and
 * {@code qk_rope_head_dim} key values shared by all heads (RoPE). Only that row is cached
 * ({@link KvCache#latent}): {@code kv_lora_rank + qk_rope_head_dim} values per position and layer. The per-head key
 * and value up-projections are absorbed, as llama.cpp does: each head's non-rotated query goes through
 * {@code attn_k_b} into latent space, so its scores are one dot product with each cached row, and the heads'
 * attention-weighted latents go through {@code attn_v_b} afterwards. For one new token this reads kv_lora_rank x
 * (nope + v) weights per head once instead of decompressing every cached position.
 * <p>
 * FFN: dense SwiGLU in the first {@code leading_dense_block_count} blocks, then routed experts
 * ({@link MixtureOfExperts} with {@link ExpertRouting}) plus the shared experts' SwiGLU.
 */
final class DeepSeek2Model implements DecoderModel {
    /** One block's weights; the query is either the low-rank pair or {@code query}, the FFN dense or experts + shared. */
    record Block(int index, float[] attentionNorm, WeightMatrix queryA, float[] queryANorm, WeightMatrix queryB,
                 WeightMatrix query, WeightMatrix kvA, float[] kvANorm, WeightMatrix keyB, WeightMatrix valueB,
                 WeightMatrix output, float[] ffnNorm, WeightMatrix gate, WeightMatrix up, WeightMatrix down,
                 ExpertWeights experts, WeightMatrix sharedGate, WeightMatrix sharedUp, WeightMatrix sharedDown) {

        List<WeightMatrix> denseMatrices() {
            List<WeightMatrix> matrices = new ArrayList<>();
            for (WeightMatrix m : new WeightMatrix[] {queryA, queryB, query, kvA, keyB, valueB, output, gate, up, down,
                    sharedGate, sharedUp, sharedDown}) {
                if (m != null) {
                    matrices.add(m);
                }
            }
            return matrices;
        }
    }

    private final DeepSeek2.Hyperparameters hyper;
    private final LlamaConfig config;
    private final LayerRange layers;
    private final WorkerPool pool;
    private final WeightMatrix embedding, output;
    private float[] logitRows;
    private final float[] outputNorm;
    private final Block[] blocks;
    private final MixtureOfExperts experts;
    private final MixtureOfExperts.SharedExperts[] sharedExperts;
    private final float[] inverseFrequencies;
    /** ggml_rope's theta_scale, powf(base, -2 / dims), by which its angle grows pair by pair (ggml order only). */
    private final float ggmlThetaScale;
    private final float[] ramp;
    private LlamaModel.Collective collective = LlamaModel.Collective.NONE;
    private float[] x, normed, queryLatent, q, kv, attention, projected, gate, up, shared;
    private float[][] queryRows, scores, context, roundedRows;
    /** The F16 latent rows of one layer widened for a prompt batch ({@link #TILED_BATCH} tokens or more). */
    private float[] widened;
    /** Decode over an F16 cache: per worker, its heads' queries and accumulators, and one widened row. */
    private float[][] headQueries, headAccumulators, widenedRow;
    /** llama.cpp's CPU flash attention takes its tiled path (F32 accumulator) from micro-batches of this many tokens. */
    static final int TILED_BATCH = 64;
    private int scratchTokens;
    private long[] profile;
    private boolean profileCpu;
    private long lastCpu;
    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    DeepSeek2Model(DeepSeek2.Hyperparameters hyper, GgufFile file, LayerRange range, WorkerPool pool) {
        this(hyper, file, range, pool, null);
    }

    /** With a tensor-parallel {@code slice} (null: the whole of each layer). */
    DeepSeek2Model(DeepSeek2.Hyperparameters hyper, GgufFile file, LayerRange range, WorkerPool pool,
                   Architecture.TensorSlice slice) {
        this.hyper = hyper;
        LlamaConfig config = hyper.base();
        this.layers = range;
        this.pool = pool;
        // llama.cpp's activation rounding on every product, so that greedy tokens match its (LlamaCppGreedyTest)
        pool.roundActivations(true);
        if (range.end() > config.layers()) {
            throw new IllegalArgumentException("layer range " + range + " exceeds the model's " + config.layers() + " layers");
        }
        int dim = config.dimension(), heads = config.heads(), keyLength = config.headDimension();
        embedding = LlamaWeights.matrix(file, "token_embd.weight", dim, config.vocabulary());
        WeightMatrix output = file.optionalTensor("output.weight") == null ? embedding
                : LlamaWeights.matrix(file, "output.weight", dim, config.vocabulary());
        outputNorm = LlamaWeights.vector(file, "output_norm.weight", dim);
        blocks = new Block[range.count()];
        for (int layer = range.first(); layer < range.end(); layer++) {
            String p = "blk." + layer + ".";
            boolean lowRankQuery = hyper.queryRank() > 0;
            boolean dense = layer < hyper.leadingDense();
            int width = config.expertFeedForward(), sharedWidth = width * hyper.sharedExperts();
            ExpertWeights routed = null;
            if (!dense) {
                ExpertRouting routing = hyper.routing().withBias(
                        LlamaWeights.optionalVector(file, p + "exp_probs_b.bias", config.experts()));
                routed = ExpertWeights.of(LlamaWeights.matrix(file, p + "ffn_gate_inp.weight", dim, config.experts()),
                        LlamaWeights.matrix(file, p + "ffn_gate_exps.weight", dim, width, config.experts()),
                        LlamaWeights.matrix(file, p + "ffn_up_exps.weight", dim, width, config.experts()),
                        LlamaWeights.matrix(file, p + "ffn_down_exps.weight", width, dim, config.experts()),
                        config.experts(), config.expertsUsed()).withRouting(routing);
            }
            blocks[layer - range.first()] = new Block(layer,
                    LlamaWeights.vector(file, p + "attn_norm.weight", dim),
                    lowRankQuery ? LlamaWeights.matrix(file, p + "attn_q_a.weight", dim, hyper.queryRank()) : null,
                    lowRankQuery ? LlamaWeights.vector(file, p + "attn_q_a_norm.weight", hyper.queryRank()) : null,
                    lowRankQuery ? LlamaWeights.matrix(file, p + "attn_q_b.weight", hyper.queryRank(), heads * keyLength) : null,
                    lowRankQuery ? null : LlamaWeights.matrix(file, p + "attn_q.weight", dim, heads * keyLength),
                    LlamaWeights.matrix(file, p + "attn_kv_a_mqa.weight", dim, hyper.latentWidth()),
                    LlamaWeights.vector(file, p + "attn_kv_a_norm.weight", hyper.kvRank()),
                    LlamaWeights.matrix(file, p + "attn_k_b.weight", hyper.keyNope(), hyper.kvRank(), heads),
                    LlamaWeights.matrix(file, p + "attn_v_b.weight", hyper.kvRank(), hyper.valueHead(), heads),
                    LlamaWeights.matrix(file, p + "attn_output.weight", heads * hyper.valueHead(), dim),
                    LlamaWeights.vector(file, p + "ffn_norm.weight", dim),
                    dense ? LlamaWeights.matrix(file, p + "ffn_gate.weight", dim, config.feedForward()) : null,
                    dense ? LlamaWeights.matrix(file, p + "ffn_up.weight", dim, config.feedForward()) : null,
                    dense ? LlamaWeights.matrix(file, p + "ffn_down.weight", config.feedForward(), dim) : null,
                    routed,
                    dense ? null : LlamaWeights.matrix(file, p + "ffn_gate_shexp.weight", dim, sharedWidth),
                    dense ? null : LlamaWeights.matrix(file, p + "ffn_up_shexp.weight", dim, sharedWidth),
                    dense ? null : LlamaWeights.matrix(file, p + "ffn_down_shexp.weight", sharedWidth, dim));
        }
        WeightMatrix localOutput = output;
        LlamaConfig localConfig = config;
        if (slice != null) {
            int denseRows = 0;
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = shard(blocks[i], slice);
                if (blocks[i].gate() != null) {
                    denseRows = blocks[i].gate().rows();
                }
            }
            localOutput = output.rowSlice(slice.firstVocabularyRow(), slice.vocabularyRows());
            localConfig = config.shard(slice.headCount(), slice.headCount(), denseRows);
        }
        this.output = localOutput;
        this.config = localConfig;
        sharedExperts = new MixtureOfExperts.SharedExperts[blocks.length];
        for (int i = 0; i < blocks.length; i++) {
            if (blocks[i].sharedGate() != null) {
                sharedExperts[i] = new MixtureOfExperts.SharedExperts(blocks[i].sharedGate(), blocks[i].sharedUp(),
                        blocks[i].sharedDown());
            }
        }
        experts = new MixtureOfExperts(dim, config.expertFeedForward());
        int pairs = hyper.keyRope() / 2;
        ggmlThetaScale = Kernels.ggmlOrder() ? Kernels.pow((float) config.ropeTheta(), -2.0f / hyper.keyRope()) : 0;
        inverseFrequencies = new float[pairs];
        ramp = new float[pairs];
        for (int i = 0; i < pairs; i++) {
            inverseFrequencies[i] = (float) Math.pow(config.ropeTheta(), -2.0 * i / hyper.keyRope());
            // ggml's rope_yarn_ramp over the pair index, times the extrapolation factor
            float y = (i - hyper.correctionLow()) / Math.max(0.001f, hyper.correctionHigh() - hyper.correctionLow());
            ramp[i] = (1 - Math.min(1, Math.max(0, y))) * hyper.extrapolation();
        }
    }

    /** A rank's slice of one block ({@link DeepSeek2#loadTensorShard}). */
    private Block shard(Block b, Architecture.TensorSlice slice) {
        int keyLength = hyper.base().headDimension(), kvRank = hyper.kvRank(), valueHead = hyper.valueHead();
        int h0 = slice.firstHead(), hn = slice.headCount();
        WeightMatrix gate = null, up = null, down = null, sharedGate = null, sharedUp = null, sharedDown = null;
        if (b.gate() != null) {
            int[] rows = proportionalRows(b.gate().rows(), b.down().type().blockSize(), slice);
            gate = b.gate().rowSlice(rows[0], rows[1]);
            up = b.up().rowSlice(rows[0], rows[1]);
            down = b.down().columnSlice(rows[0], rows[1]);
        }
        if (b.sharedGate() != null) {
            int[] rows = proportionalRows(b.sharedGate().rows(), b.sharedDown().type().blockSize(), slice);
            sharedGate = b.sharedGate().rowSlice(rows[0], rows[1]);
            sharedUp = b.sharedUp().rowSlice(rows[0], rows[1]);
            sharedDown = b.sharedDown().columnSlice(rows[0], rows[1]);
        }
        return new Block(b.index(), b.attentionNorm(), b.queryA(), b.queryANorm(),
                b.queryB() == null ? null : b.queryB().rowSlice(h0 * keyLength, hn * keyLength),
                b.query() == null ? null : b.query().rowSlice(h0 * keyLength, hn * keyLength),
                b.kvA(), b.kvANorm(), b.keyB().rowSlice(h0 * kvRank, hn * kvRank),
                b.valueB().rowSlice(h0 * valueHead, hn * valueHead), b.output().columnSlice(h0 * valueHead, hn * valueHead),
                b.ffnNorm(), gate, up, down,
                b.experts() == null ? null : b.experts().localExperts(slice.firstUnit(), slice.unitCount()),
                sharedGate, sharedUp, sharedDown);
    }

    /** Rows [first, first + count) of a dense FFN of {@code rows} in the rank's share of the units, on block bounds. */
    private static int[] proportionalRows(int rows, int granule, Architecture.TensorSlice slice) {
        int granules = rows / granule;
        int first = (int) Math.round((double) granules * slice.firstUnit() / slice.units()) * granule;
        int end = (int) Math.round((double) granules * (slice.firstUnit() + slice.unitCount()) / slice.units()) * granule;
        if (end <= first) {
            throw new IllegalArgumentException("a rank's share of an FFN of " + rows + " rows (blocks of " + granule
                    + ") is empty; use fewer ranks");
        }
        return new int[] {first, end - first};
    }

    @Override
    public LlamaConfig config() {
        return config;
    }

    @Override
    public void collective(LlamaModel.Collective collective) {
        this.collective = collective == null ? LlamaModel.Collective.NONE : collective;
    }

    @Override
    public void profile(long[] nanos) {
        profile = nanos;
        profileCpu = true;
        lastCpu = nanos == null ? 0 : THREADS.getCurrentThreadCpuTime();
    }

    @Override
    public void profileWall(long[] nanos) {
        profile = nanos;
        profileCpu = false;
    }

    private long mark(LlamaModel.Phase phase, long since) {
        if (profile == null) {
            return 0;
        }
        long now = System.nanoTime();
        profile[phase.ordinal()] += now - since;
        if (profileCpu) {
            long cpu = THREADS.getCurrentThreadCpuTime();
            profile[LlamaModel.Phase.values().length + phase.ordinal()] += cpu - lastCpu;
            lastCpu = cpu;
            return System.nanoTime();
        }
        return now;
    }

    @Override
    public long bytesPerToken() {
        long bytes = output.byteSize() + embedding.byteSize() / embedding.rows();
        for (Block block : blocks) {
            for (WeightMatrix m : block.denseMatrices()) {
                bytes += m.byteSize();
            }
            bytes += block.experts() == null ? 0 : block.experts().bytesPerToken();
        }
        return bytes;
    }

    @Override
    public List<MemorySegment> decodeWeights() {
        List<MemorySegment> segments = new ArrayList<>();
        for (Block block : blocks) {
            for (WeightMatrix m : block.denseMatrices()) {
                segments.add(m.data().asSlice(0, m.byteSize()));
            }
        }
        segments.add(output.data().asSlice(0, output.byteSize()));
        return segments;
    }

    @Override
    public long kvValuesPerPosition() {
        return (long) blocks.length * hyper.latentWidth();
    }

    @Override
    public long multiHeadKvValuesPerPosition() {
        return (long) blocks.length * config.heads() * (config.headDimension() + hyper.valueHead());
    }

    @Override
    public KvCache allocateCache(int contextLength) {
        return KvCache.latent(blocks.length, hyper.latentWidth(), contextLength, halfCache());
    }

    /**
     * F16 latent rows unless {@code -Dinference.kvCache=f32}: llama.cpp's default cache type ({@code --cache-type-k
     * f16}), which the node's greedy tokens are compared with, and half the bytes a decode step reads.
     */
    static boolean halfCache() {
        String type = System.getProperty(KvCache.TYPE_PROPERTY, "f16");
        if (!type.equals("f32") && !type.equals("f16")) {
            throw new IllegalArgumentException("-D" + KvCache.TYPE_PROPERTY + "=" + type + ": the KV cache type must be f32 or f16");
        }
        return type.equals("f16");
    }

    @Override
    public float[] forward(int[] tokens, int from, int count, int position, KvCache cache, boolean logits) {
        if (position + count > cache.capacity()) {
            throw new IllegalArgumentException("positions " + position + ".." + (position + count)
                    + " exceed the context of " + cache.capacity() + " tokens");
        }
        float[] last = null;
        for (int done = 0; done < count; done += LlamaModel.MAX_BATCH) {
            int batch = Math.min(LlamaModel.MAX_BATCH, count - done);
            boolean lastOnly = logits && done + batch == count;
            forwardBatch(tokens, from + done, null, batch, position + done, cache, lastOnly);
            if (lastOnly) {
                last = logitsOf(x, outputRow * config.dimension(), true);
            }
        }
        return last;
    }

    @Override
    public float[] forwardStage(int[] tokens, int from, float[] hidden, int count, int position, KvCache cache) {
        if (count > LlamaModel.MAX_BATCH || position + count > cache.capacity()) {
            throw new IllegalArgumentException("stage batch of " + count + " at position " + position
                    + " exceeds the batch limit " + LlamaModel.MAX_BATCH + " or the context of " + cache.capacity());
        }
        forwardBatch(tokens, from, hidden, count, position, cache, false);
        return x;
    }

    @Override
    public float[] logits(float[] hidden, int offset) {
        return logitsOf(hidden, offset, false);
    }

    private float[] logitsOf(float[] hidden, int offset, boolean fromForward) {
        long time = fromForward && profile != null ? System.nanoTime() : 0;
        int dim = config.dimension();
        float[] normedLast = new float[dim];
        rmsNorm(hidden, offset, outputNorm, normedLast, 0, dim);
        time = fromForward ? mark(LlamaModel.Phase.OUTPUT_NORM, time) : 0;
        float[] result = new float[config.vocabulary()];
        if (output.rows() == result.length) {
            Kernels.matvec(pool, output, normedLast, result);
        } else { // tensor parallelism: this rank's vocabulary rows, then gathered on rank 0
            if (logitRows == null || logitRows.length != output.rows()) {
                logitRows = new float[output.rows()];
            }
            Kernels.matvec(pool, output, normedLast, logitRows);
            System.arraycopy(logitRows, 0, result, collective.firstVocabularyRow(), logitRows.length);
        }
        time = fromForward ? mark(LlamaModel.Phase.LOGITS, time) : 0;
        if (fromForward) {
            collective.gatherLogits(result);
            mark(LlamaModel.Phase.LOGITS_GATHER, time);
        }
        return result;
    }

    /** The row of {@link #x} that holds the last token's output after {@link #forwardBatch} (0 when only it was kept). */
    private int outputRow;

    /**
     * One batch through this model's blocks. {@code lastOnly}: only the last token's output is wanted, so the last
     * layer's FFN runs for that token alone, as llama.cpp does (its {@code inp_out_ids}); the FFN writes no cache, so
     * nothing else changes, and a prompt's last layer costs one token's FFN.
     */
    private void forwardBatch(int[] tokens, int from, float[] hidden, int batch, int position, KvCache cache,
                              boolean lastOnly) {
        outputRow = batch - 1;
        int dim = config.dimension(), heads = config.heads(), keyLength = config.headDimension();
        int queryWidth = heads * keyLength, latentWidth = hyper.latentWidth(), kvRank = hyper.kvRank();
        int valueWidth = heads * hyper.valueHead();
        ensureScratch(batch, cache.capacity());
        long time = profile == null ? 0 : System.nanoTime();
        if (profile != null && profileCpu) {
            lastCpu = THREADS.getCurrentThreadCpuTime();
        }
        if (hidden != null) {
            System.arraycopy(hidden, 0, x, 0, batch * dim);
        }
        for (int t = 0; hidden == null && t < batch; t++) {
            int token = tokens[from + t];
            if (token < 0 || token >= config.vocabulary()) {
                throw new IllegalArgumentException("token id " + token + " outside the vocabulary of " + config.vocabulary());
            }
            Kernels.dequantizeRow(embedding, token, x, t * dim);
        }
        time = mark(LlamaModel.Phase.EMBEDDING, time);
        for (Block block : blocks) {
            for (int t = 0; t < batch; t++) {
                rmsNorm(x, t * dim, block.attentionNorm(), normed, t * dim, dim);
            }
            TensorProbe.dump("attn_norm", block.index(), normed, 0, batch, dim);
            time = mark(LlamaModel.Phase.ATTENTION_NORM, time);
            if (block.queryA() != null && batch == 1) {
                // q_a and kv_a share their input: one parallel loop for both
                Kernels.matvec(pool, new WeightMatrix[] {block.queryA(), block.kvA()}, normed, new float[][] {queryLatent, kv});
                rmsNorm(queryLatent, 0, block.queryANorm(), queryLatent, 0, hyper.queryRank());
                Kernels.matvec(pool, block.queryB(), queryLatent, q);
            } else if (block.queryA() != null) {
                Kernels.matmul(pool, block.queryA(), normed, batch, queryLatent);
                for (int t = 0; t < batch; t++) {
                    int offset = t * hyper.queryRank();
                    rmsNorm(queryLatent, offset, block.queryANorm(), queryLatent, offset, hyper.queryRank());
                }
                Kernels.matmul(pool, block.queryB(), queryLatent, batch, q);
            } else {
                Kernels.matmul(pool, block.query(), normed, batch, q);
            }
            if (block.queryA() == null || batch > 1) {
                Kernels.matmul(pool, block.kvA(), normed, batch, kv);
            }
            time = mark(LlamaModel.Phase.QKV, time);
            int layer = block.index() - layers.first();
            float[] rows = cache.half() ? null : cache.keys[layer];
            short[] halfRows = cache.half() ? cache.halfKeys[layer] : null;
            for (int t = 0; t < batch; t++) {
                int row = t * latentWidth;
                rmsNorm(kv, row, block.kvANorm(), kv, row, kvRank);
                rope(t, position + t, q, kv);
                if (halfRows != null) {
                    for (int i = 0; i < latentWidth; i++) {
                        halfRows[(position + t) * latentWidth + i] = Float.floatToFloat16(kv[row + i]);
                    }
                } else {
                    System.arraycopy(kv, row, rows, (position + t) * latentWidth, latentWidth);
                }
            }
            time = mark(LlamaModel.Phase.ROPE_CACHE, time);
            if (halfRows != null && batch == 1 && !Kernels.ggmlOrder()) {
                attendHalfDecode(block, halfRows, position, queryWidth, valueWidth);
            } else if (halfRows != null && batch >= TILED_BATCH) {
                // llama.cpp's tiled flash attention for prompt batches of 64 or more: F32 query and accumulator over
                // the F16 rows widened (exact), which is the F32 path below
                int filled = (position + batch) * latentWidth;
                if (widened == null || widened.length < filled) {
                    widened = new float[cache.capacity() * latentWidth];
                }
                Kernels.halfToFloat(halfRows, 0, widened, 0, filled);
                attendBatch(block, widened, batch, position, queryWidth, valueWidth);
            } else if (halfRows == null && batch >= TILED_BATCH) {
                attendBatch(block, rows, batch, position, queryWidth, valueWidth);
            } else {
                attend(block, rows, halfRows, batch, position, queryWidth, valueWidth);
            }
            time = mark(LlamaModel.Phase.ATTENTION, time);
            Kernels.matmul(pool, block.output(), attention, batch, projected);
            collective.allReduce(projected, batch * dim);
            time = mark(LlamaModel.Phase.ATTENTION_OUTPUT, time);
            TensorProbe.dump("attn_out", block.index(), projected, 0, batch, dim);
            TensorProbe.dump("kqv_out", block.index(), attention, 0, batch, valueWidth);
            add(x, projected, batch * dim);
            int ffnRows = batch;
            if (lastOnly && batch > 1 && block.index() == config.layers() - 1) {
                System.arraycopy(x, (batch - 1) * dim, x, 0, dim);
                ffnRows = 1;
                outputRow = 0;
            }
            TensorProbe.dump("ffn_inp", block.index(), x, 0, ffnRows, dim);
            for (int t = 0; t < ffnRows; t++) {
                rmsNorm(x, t * dim, block.ffnNorm(), normed, t * dim, dim);
            }
            TensorProbe.dump("ffn_norm", block.index(), normed, 0, ffnRows, dim);
            time = mark(LlamaModel.Phase.FFN_NORM, time);
            if (block.experts() == null) {
                swigluFeedForward(block.gate(), block.up(), block.down(), ffnRows, projected);
                time = mark(LlamaModel.Phase.DOWN, time);
            } else {
                experts.forward(pool, block.experts(), normed, ffnRows, projected, sharedExperts[block.index() - layers.first()]);
                time = mark(LlamaModel.Phase.EXPERTS, time);
            }
            collective.allReduce(projected, ffnRows * dim);
            TensorProbe.dump("ffn_out", block.index(), projected, 0, ffnRows, dim);
            add(x, projected, ffnRows * dim);
            TensorProbe.dump("l_out", block.index(), x, 0, ffnRows, dim);
            time = mark(LlamaModel.Phase.RESIDUAL, time);
        }
        TensorProbe.step++;
    }

    private void swigluFeedForward(WeightMatrix gateMatrix, WeightMatrix upMatrix, WeightMatrix downMatrix, int batch,
                                   float[] out) {
        int width = gateMatrix.rows();
        if (batch == 1) {
            Kernels.matvec(pool, new WeightMatrix[] {gateMatrix, upMatrix}, normed, new float[][] {gate, up});
        } else {
            Kernels.matmul(pool, gateMatrix, normed, batch, gate);
            Kernels.matmul(pool, upMatrix, normed, batch, up);
        }
        Kernels.swiglu(gate, up, batch * width);
        Kernels.matmul(pool, downMatrix, gate, batch, out);
    }

    /**
     * RoPE on interleaved pairs (llama.cpp's NORM rope type for deepseek2) of each head's last qk_rope_head_dim query
     * values and of the token's shared key part, with YaRN as ggml's rope_yarn: the interpolated angle mixed with the
     * extrapolated one by the ramp between the correction dimensions, both scaled by {@code ropeScale}.
     */
    private void rope(int t, int position, float[] queries, float[] latents) {
        int heads = config.heads(), keyLength = config.headDimension(), nope = hyper.keyNope();
        int keyOffset = t * hyper.latentWidth() + hyper.kvRank();
        float scale = hyper.ropeScale(), frequencyScale = hyper.frequencyScale();
        // ggml_rope_cache_init: theta starts at the position and is multiplied by powf(base, -2 / dims) per pair
        float ggmlTheta = position;
        for (int i = 0; i < inverseFrequencies.length; i++, ggmlTheta *= ggmlThetaScale) {
            float extrapolated = Kernels.ggmlOrder() ? ggmlTheta : position * inverseFrequencies[i];
            float interpolated = frequencyScale * extrapolated;
            // llama.cpp's build (GCC contracts a * b + c * d) fuses the first product: fma(interp, 1 - ramp, extrap * ramp)
            float theta = Kernels.ggmlOrder() ? Math.fma(interpolated, 1 - ramp[i], extrapolated * ramp[i])
                    : interpolated * (1 - ramp[i]) + extrapolated * ramp[i];
            float cos = Kernels.cos(theta) * scale;
            float sin = Kernels.sin(theta) * scale;
            rotate(latents, keyOffset + 2 * i, cos, sin);
            for (int h = 0; h < heads; h++) {
                rotate(queries, t * heads * keyLength + h * keyLength + nope + 2 * i, cos, sin);
            }
        }
    }

    private static void rotate(float[] values, int a, float cos, float sin) {
        float x0 = values[a], x1 = values[a + 1];
        if (Kernels.ggmlOrder()) {
            // ggml-cpu's rotate_pairs as GCC compiled it (fused: x0 * cos - x1 * sin and x0 * sin + x1 * cos)
            values[a] = Math.fma(x0, cos, -(x1 * sin));
            values[a + 1] = Math.fma(x0, sin, x1 * cos);
            return;
        }
        values[a] = x0 * cos - x1 * sin;
        values[a + 1] = x0 * sin + x1 * cos;
    }

    /** Absorbed multi-head latent attention of every (token, head), spread over the workers. */
    private void attend(Block block, float[] rows, short[] halfRows, int batch, int position, int queryWidth, int valueWidth) {
        int heads = config.heads(), keyLength = config.headDimension(), nope = hyper.keyNope();
        int kvRank = hyper.kvRank(), latentWidth = hyper.latentWidth(), valueHead = hyper.valueHead();
        float scale = hyper.attentionScale();
        WeightMatrix keyB = block.keyB(), valueB = block.valueB();
        float[][] queryRows = this.queryRows, scores = this.scores, context = this.context;
        float[] q = this.q, attention = this.attention;
        float[][] roundedRows = this.roundedRows;
        if (TensorProbe.DIRECTORY != null && (probeLatents == null || probeLatents.length < batch * heads * kvRank)) {
            probeLatents = new float[batch * heads * kvRank];
        }
        float[] probeLatents = this.probeLatents;
        pool.parallelFor(batch * heads, (start, end, worker) -> {
            float[] query = queryRows[worker], score = scores[worker], latent = context[worker], rounded = roundedRows[worker];
            for (int item = start; item < end; item++) {
                int t = item / heads, h = item % heads;
                int queryOffset = t * queryWidth + h * keyLength;
                // llama.cpp's wk_b product takes the head's non-rotated query rounded for wk_b's type, like any product
                Kernels.roundActivations(pool, keyB, q, queryOffset, nope, rounded, 0);
                for (int r = 0; r < kvRank; r++) {
                    query[r] = Kernels.dot(keyB, h * kvRank + r, rounded, 0);
                }
                System.arraycopy(q, queryOffset + nope, query, kvRank, hyper.keyRope());
                int length = position + t + 1;
                if (halfRows != null) {
                    attendHalf(query, halfRows, length, score, latent);
                } else {
                float max = Float.NEGATIVE_INFINITY;
                for (int s = 0; s < length; s++) {
                    score[s] = Kernels.dot(query, 0, rows, s * latentWidth, latentWidth) * scale;
                    max = Math.max(max, score[s]);
                }
                float sum = 0;
                for (int s = 0; s < length; s++) {
                    score[s] = (float) Math.exp(score[s] - max);
                    sum += score[s];
                }
                java.util.Arrays.fill(latent, 0, kvRank, 0f);
                float inverse = 1f / sum;
                for (int s = 0; s < length; s++) {
                    Kernels.axpy(latent, 0, score[s] * inverse, rows, s * latentWidth, kvRank);
                }
                }
                int out = t * valueWidth + h * valueHead;
                if (probeLatents != null) {
                    System.arraycopy(latent, 0, probeLatents, (t * heads + h) * kvRank, kvRank);
                }
                Kernels.roundActivations(pool, valueB, latent, 0, kvRank, rounded, 0);
                for (int j = 0; j < valueHead; j++) {
                    attention[out + j] = Kernels.dot(valueB, h * valueHead + j, rounded, 0);
                }
            }
        });
        if (probeLatents != null) {
            TensorProbe.dump("fattn_latent", block.index(), probeLatents, 0, batch * heads, kvRank);
        }
    }

    /** Each (token, head)'s attention over the latents, kept for {@link TensorProbe} only (null unless it is on). */
    private float[] probeLatents;

    /**
     * {@link #attend} for a prompt batch of {@link #TILED_BATCH} tokens or more over F32 rows: the same arithmetic,
     * but each head's absorbed {@code attn_k_b} and {@code attn_v_b} products run as one matrix product over the
     * batch's tokens ({@link Kernels#matmul}: each weight row dequantized once per batch and multiplied in register
     * tiles) instead of one row dot product per (token, head, row): for 128 tokens, 16 heads and a kv_lora_rank of
     * 512 that was about a million calls of a 4-block dot product per layer. The activations are rounded for each
     * token's row as before; only the float summation order of those products changes (decode and batches under 64
     * tokens, which the greedy comparisons with llama.cpp run, keep {@link #attend}).
     */
    private void attendBatch(Block block, float[] rows, int batch, int position, int queryWidth, int valueWidth) {
        int heads = config.heads(), keyLength = config.headDimension(), nope = hyper.keyNope();
        int kvRank = hyper.kvRank(), latentWidth = hyper.latentWidth(), valueHead = hyper.valueHead(), rope = hyper.keyRope();
        float scale = hyper.attentionScale();
        ensureBatchScratch(batch);
        float[] headInput = batchHeadInput, headOutput = batchHeadOutput, latentQueries = batchQueries, contexts = batchContexts;
        for (int h = 0; h < heads; h++) {
            for (int t = 0; t < batch; t++) {
                System.arraycopy(q, t * queryWidth + h * keyLength, headInput, t * nope, nope);
            }
            Kernels.matmul(pool, block.keyB().rowSlice(h * kvRank, kvRank), headInput, batch, headOutput);
            for (int t = 0; t < batch; t++) {
                int at = (t * heads + h) * latentWidth;
                System.arraycopy(headOutput, t * kvRank, latentQueries, at, kvRank);
                System.arraycopy(q, t * queryWidth + h * keyLength + nope, latentQueries, at + kvRank, rope);
            }
        }
        float[][] scores = this.scores;
        pool.parallelFor(batch * heads, (start, end, worker) -> {
            float[] score = scores[worker];
            for (int item = start; item < end; item++) {
                int t = item / heads, queryAt = item * latentWidth, latentAt = item * kvRank;
                int length = position + t + 1;
                float max = Float.NEGATIVE_INFINITY;
                for (int s = 0; s < length; s++) {
                    score[s] = Kernels.dot(latentQueries, queryAt, rows, s * latentWidth, latentWidth) * scale;
                    max = Math.max(max, score[s]);
                }
                float sum = 0;
                for (int s = 0; s < length; s++) {
                    score[s] = (float) Math.exp(score[s] - max);
                    sum += score[s];
                }
                java.util.Arrays.fill(contexts, latentAt, latentAt + kvRank, 0f);
                float inverse = 1f / sum;
                for (int s = 0; s < length; s++) {
                    Kernels.axpy(contexts, latentAt, score[s] * inverse, rows, s * latentWidth, kvRank);
                }
            }
        });
        for (int h = 0; h < heads; h++) {
            for (int t = 0; t < batch; t++) {
                System.arraycopy(contexts, (t * heads + h) * kvRank, headInput, t * kvRank, kvRank);
            }
            Kernels.matmul(pool, block.valueB().rowSlice(h * valueHead, valueHead), headInput, batch, headOutput);
            for (int t = 0; t < batch; t++) {
                System.arraycopy(headOutput, t * valueHead, attention, t * valueWidth + h * valueHead, valueHead);
            }
        }
    }

    /** {@link #attendBatch}'s buffers: one head's inputs and outputs for the batch, all (token, head) queries and latents. */
    private float[] batchHeadInput, batchHeadOutput, batchQueries, batchContexts;

    private void ensureBatchScratch(int batch) {
        int heads = config.heads(), kvRank = hyper.kvRank();
        if (batchQueries == null || batchQueries.length < batch * heads * hyper.latentWidth()) {
            int width = Math.max(kvRank, Math.max(hyper.keyNope(), hyper.valueHead()));
            batchHeadInput = new float[batch * width];
            batchHeadOutput = new float[batch * width];
            batchQueries = new float[batch * heads * hyper.latentWidth()];
            batchContexts = new float[batch * heads * kvRank];
        }
    }

    /**
     * One (token, head) over an F16 latent cache, as llama.cpp's CPU flash attention computes it
     * ({@code ggml_compute_forward_flash_attn_ext_f16_one_chunk}, the path of its decode steps and of prompt batches
     * under 64 tokens): the query rounded to F16, each score an F16 dot product times the scale, an online softmax
     * (running maximum {@code M}, sum {@code S}) and the value accumulator kept in F16, rounded after every position
     * (ggml_vec_scale_f16 / ggml_vec_mad_f16); at the end the accumulator over {@code S}. The values are the latent
     * part of each cached row (llama.cpp's V is a view of the same K cache). Into {@code latent[0 .. kvRank)}.
     */
    private void attendHalf(float[] query, short[] halfRows, int length, float[] accumulator, float[] latent) {
        int kvRank = hyper.kvRank(), latentWidth = hyper.latentWidth();
        float scale = hyper.attentionScale();
        Kernels.roundToHalf(query, 0, latentWidth);
        java.util.Arrays.fill(accumulator, 0, kvRank, 0f);
        float max = Float.NEGATIVE_INFINITY, sum = 0;
        for (int s = 0; s < length; s++) {
            float score = Kernels.dotHalf(halfRows, s * latentWidth, query, 0, latentWidth) * scale;
            float previous = max, ms = 1, vs = 1;
            if (score > max) {
                max = score;
                ms = Kernels.exp(previous - max);
                Kernels.scaleHalf(accumulator, ms, kvRank);
            } else {
                vs = Kernels.exp(score - max);
            }
            Kernels.madHalf(accumulator, halfRows, s * latentWidth, vs, kvRank);
            sum = Math.fma(sum, ms, vs); // GCC contracts llama.cpp's S = S*ms + vs into one fused multiply-add
        }
        float inverse = sum == 0 ? 0 : 1 / sum;
        for (int i = 0; i < kvRank; i++) {
            latent[i] = accumulator[i] * inverse;
        }
    }

    /**
     * One token's attention over an F16 latent cache, all heads: the same arithmetic as {@link #attendHalf} (each
     * head's online softmax and F16 accumulator in llama.cpp's order), but with positions in the outer loop, so each
     * cached row is widened once for all the worker's heads instead of once per head.
     */
    private void attendHalfDecode(Block block, short[] halfRows, int position, int queryWidth, int valueWidth) {
        int heads = config.heads(), keyLength = config.headDimension(), nope = hyper.keyNope();
        int kvRank = hyper.kvRank(), latentWidth = hyper.latentWidth(), valueHead = hyper.valueHead();
        float scale = hyper.attentionScale();
        WeightMatrix keyB = block.keyB(), valueB = block.valueB();
        float[][] headQueries = this.headQueries, headAccumulators = this.headAccumulators, widenedRow = this.widenedRow;
        float[][] roundedRows = this.roundedRows, context = this.context;
        float[] q = this.q, attention = this.attention;
        int length = position + 1;
        pool.parallelFor(heads, (start, end, worker) -> {
            float[] queries = headQueries[worker], accumulators = headAccumulators[worker], row = widenedRow[worker];
            float[] rounded = roundedRows[worker], latent = context[worker];
            int count = end - start;
            float[] max = new float[count], sum = new float[count];
            for (int i = 0; i < count; i++) {
                int h = start + i, queryOffset = h * keyLength, base = i * latentWidth;
                Kernels.roundActivations(pool, keyB, q, queryOffset, nope, rounded, 0);
                for (int r = 0; r < kvRank; r++) {
                    queries[base + r] = Kernels.dot(keyB, h * kvRank + r, rounded, 0);
                }
                System.arraycopy(q, queryOffset + nope, queries, base + kvRank, hyper.keyRope());
                Kernels.roundToHalf(queries, base, latentWidth);
                java.util.Arrays.fill(accumulators, i * kvRank, (i + 1) * kvRank, 0f);
                max[i] = Float.NEGATIVE_INFINITY;
            }
            for (int s = 0; s < length; s++) {
                Kernels.halfToFloat(halfRows, s * latentWidth, row, 0, latentWidth);
                for (int i = 0; i < count; i++) {
                    float score = Kernels.dot(row, 0, queries, i * latentWidth, latentWidth) * scale;
                    float previous = max[i], ms = 1, vs = 1;
                    if (score > previous) {
                        max[i] = score;
                        ms = Kernels.exp(previous - score);
                        Kernels.scaleHalf(accumulators, i * kvRank, ms, kvRank);
                    } else {
                        vs = Kernels.exp(score - previous);
                    }
                    Kernels.madHalf(accumulators, i * kvRank, row, vs, kvRank);
                    sum[i] = Math.fma(sum[i], ms, vs);
                }
            }
            for (int i = 0; i < count; i++) {
                int h = start + i;
                float inverse = sum[i] == 0 ? 0 : 1 / sum[i];
                for (int r = 0; r < kvRank; r++) {
                    latent[r] = accumulators[i * kvRank + r] * inverse;
                }
                Kernels.roundActivations(pool, valueB, latent, 0, kvRank, rounded, 0);
                int out = h * valueHead;
                for (int j = 0; j < valueHead; j++) {
                    attention[out + j] = Kernels.dot(valueB, h * valueHead + j, rounded, 0);
                }
            }
        });
    }

    private void ensureScratch(int batch, int capacity) {
        int workers = pool.size();
        if (scores == null || scores.length < workers || scores[0].length < capacity) {
            queryRows = new float[workers][hyper.latentWidth()];
            scores = new float[workers][Math.max(capacity, hyper.kvRank())];
            context = new float[workers][hyper.kvRank()];
            roundedRows = new float[workers][Math.max(hyper.kvRank(), hyper.keyNope())];
            headQueries = new float[workers][config.heads() * hyper.latentWidth()];
            headAccumulators = new float[workers][config.heads() * hyper.kvRank()];
            widenedRow = new float[workers][hyper.latentWidth()];
        }
        if (batch <= scratchTokens) {
            return;
        }
        int dim = config.dimension();
        int ffn = Math.max(config.feedForward(), config.expertFeedForward() * hyper.sharedExperts());
        x = new float[batch * dim];
        normed = new float[batch * dim];
        queryLatent = new float[batch * Math.max(1, hyper.queryRank())];
        q = new float[batch * config.heads() * config.headDimension()];
        kv = new float[batch * hyper.latentWidth()];
        attention = new float[batch * config.heads() * hyper.valueHead()];
        projected = new float[batch * dim];
        shared = new float[batch * dim];
        gate = new float[batch * ffn];
        up = new float[batch * ffn];
        scratchTokens = batch;
    }

    /**
     * ggml's rms_norm then mul: the float squares summed in double in order, the mean and 1/sqrt(mean + eps) in
     * float, then x times that and times the weight (two roundings, as two ggml operations).
     */
    private void rmsNorm(float[] in, int inOffset, float[] weight, float[] out, int outOffset, int size) {
        double sumOfSquares = 0;
        for (int i = 0; i < size; i++) {
            float v = in[inOffset + i];
            sumOfSquares += v * v;
        }
        float mean = (float) (sumOfSquares / size);
        float inverse = 1f / (float) Math.sqrt(mean + config.rmsEpsilon());
        for (int i = 0; i < size; i++) {
            out[outOffset + i] = in[inOffset + i] * inverse * weight[i];
        }
    }

    private static void add(float[] target, float[] addend, int length) {
        for (int i = 0; i < length; i++) {
            target[i] += addend[i];
        }
    }
}
