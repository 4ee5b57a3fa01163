package io.macfleet.node.cluster;

import io.macfleet.node.model.LayerRange;
import io.macfleet.node.model.LlamaConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * Which part of the model each rank holds, computed from the model's configuration and the cluster file alone,
 * so every rank computes the same plan (and the handshake compares {@link #describe()}).
 * <p>
 * Tensor: KV heads are split in whole groups by weight; with more ranks than KV heads, each KV head is replicated
 * on the ranks that share its query heads (as vLLM does). FFN units are split by weight in granules the FFN
 * block type gives ({@link FeedForwardSharding}). Pipeline: contiguous layer ranges by weight.
 */
public record ShardPlan(ClusterFile.Parallelism parallelism, List<TensorShard> tensor, List<LayerRange> stages) {

    /**
     * A tensor-parallel rank's slice of every layer, and its rows of the output matrix (vocabulary-parallel logits:
     * each rank computes the logits of its vocabulary rows and rank 0 gathers them, so no rank reads the whole output
     * matrix every token and the layers split by weight alone).
     */
    public record TensorShard(int firstHead, int headCount, int firstKvHead, int kvHeadCount, int firstUnit,
                              int unitCount, int firstVocabularyRow, int vocabularyRows) {
    }

    /**
     * How an FFN block type splits across tensor-parallel ranks: {@code units} indivisible pieces of
     * {@code granule} rows each. A dense SwiGLU FFN: feed-forward rows in granules of the down projection's
     * quantization block (its column slices must fall on block boundaries). A mixture of experts would give its
     * experts (granule 1) or, like the dense case, rows of every expert.
     */
    public record FeedForwardSharding(int units, int granule) {
        public static FeedForwardSharding dense(LlamaConfig config, int downBlockSize) {
            if (config.feedForward() % downBlockSize != 0) {
                throw new IllegalArgumentException("feed-forward length " + config.feedForward()
                        + " is not a multiple of the down projection's block size " + downBlockSize);
            }
            return new FeedForwardSharding(config.feedForward() / downBlockSize, downBlockSize);
        }
    }

    public static ShardPlan pipeline(LlamaConfig config, double[] weights) {
        if (weights.length > config.layers()) {
            throw new IllegalArgumentException("pipeline parallelism over " + weights.length + " ranks needs at least "
                    + weights.length + " layers; the model has " + config.layers());
        }
        int[] counts = apportion(config.layers(), weights);
        List<LayerRange> stages = new ArrayList<>();
        int first = 0;
        for (int count : counts) {
            stages.add(new LayerRange(first, first + count));
            first += count;
        }
        return new ShardPlan(ClusterFile.Parallelism.PIPELINE, List.of(), List.copyOf(stages));
    }

    /**
     * @param attentionOutputBlock block size of the attention output projection's type: a rank's query heads are
     *                             a column slice of it and must fall on block boundaries
     */
    public static ShardPlan tensor(LlamaConfig config, double[] weights, int attentionOutputBlock,
                                   FeedForwardSharding feedForward) {
        int ranks = weights.length;
        int kvHeads = config.kvHeads();
        int group = config.heads() / kvHeads;
        int[] firstHead = new int[ranks], headCount = new int[ranks], firstKv = new int[ranks], kvCount = new int[ranks];
        if (ranks <= kvHeads) {
            int[] counts = apportion(kvHeads, weights);
            int kv = 0;
            for (int r = 0; r < ranks; r++) {
                firstKv[r] = kv;
                kvCount[r] = counts[r];
                firstHead[r] = kv * group;
                headCount[r] = counts[r] * group;
                kv += counts[r];
            }
        } else {
            // More ranks than KV heads: KV head h is replicated on ranks [h * ranks / kvHeads, (h + 1) * ranks / kvHeads),
            // which split its query heads by weight.
            for (int kv = 0; kv < kvHeads; kv++) {
                int from = kv * ranks / kvHeads, to = (kv + 1) * ranks / kvHeads;
                if (to - from > group) {
                    throw new IllegalArgumentException(ranks + " tensor-parallel ranks are more than the model's "
                            + config.heads() + " query heads can be split into (" + kvHeads + " KV heads of " + group
                            + " query heads each)");
                }
                int[] counts = apportion(group, java.util.Arrays.copyOfRange(weights, from, to));
                int head = kv * group;
                for (int r = from; r < to; r++) {
                    firstKv[r] = kv;
                    kvCount[r] = 1;
                    firstHead[r] = head;
                    headCount[r] = counts[r - from];
                    head += counts[r - from];
                }
            }
        }
        if (feedForward.units() < ranks) {
            throw new IllegalArgumentException("the FFN splits into " + feedForward.units() + " pieces of "
                    + feedForward.granule() + " rows, fewer than the " + ranks + " ranks");
        }
        int[] units = apportion(feedForward.units(), weights);
        int[] vocabulary = apportion(config.vocabulary(), weights);
        List<TensorShard> shards = new ArrayList<>();
        int unit = 0, vocabularyRow = 0;
        for (int r = 0; r < ranks; r++) {
            int columns = headCount[r] * config.headDimension();
            int firstColumn = firstHead[r] * config.headDimension();
            if (columns % attentionOutputBlock != 0 || firstColumn % attentionOutputBlock != 0) {
                throw new IllegalArgumentException("rank " + r + " would hold query heads " + firstHead[r] + ".."
                        + (firstHead[r] + headCount[r] - 1) + " (" + columns + " columns of the attention output), not "
                        + "whole quantization blocks of " + attentionOutputBlock + "; use fewer ranks or an unquantized model");
            }
            shards.add(new TensorShard(firstHead[r], headCount[r], firstKv[r], kvCount[r], unit * feedForward.granule(),
                    units[r] * feedForward.granule(), vocabularyRow, vocabulary[r]));
            unit += units[r];
            vocabularyRow += vocabulary[r];
        }
        return new ShardPlan(ClusterFile.Parallelism.TENSOR, List.copyOf(shards), List.of());
    }

    /** Splits {@code total} items in proportion to the weights (largest remainder), at least one each. */
    static int[] apportion(int total, double[] weights) {
        int n = weights.length;
        if (total < n) {
            throw new IllegalArgumentException("cannot split " + total + " items over " + n + " ranks");
        }
        double sum = 0;
        for (double w : weights) {
            sum += w;
        }
        int[] counts = new int[n];
        double[] exact = new double[n];
        int given = 0;
        for (int i = 0; i < n; i++) {
            exact[i] = total * weights[i] / sum;
            counts[i] = Math.max(1, (int) Math.floor(exact[i]));
            given += counts[i];
        }
        while (given != total) {
            int pick = -1;
            for (int i = 0; i < n; i++) {
                double shortfall = exact[i] - counts[i];
                if (given < total ? pick < 0 || shortfall > exact[pick] - counts[pick] + 1e-12
                        : counts[i] > 1 && (pick < 0 || shortfall < exact[pick] - counts[pick] - 1e-12)) {
                    pick = i;
                }
            }
            counts[pick] += given < total ? 1 : -1;
            given += given < total ? 1 : -1;
        }
        return counts;
    }

    public int size() {
        return parallelism == ClusterFile.Parallelism.TENSOR ? tensor.size() : stages.size();
    }

    /** One line per rank; equal on every rank for the same model and cluster file. */
    public String describe() {
        StringBuilder out = new StringBuilder(parallelism.label());
        for (int r = 0; r < size(); r++) {
            out.append("; rank ").append(r).append(": ");
            if (parallelism == ClusterFile.Parallelism.TENSOR) {
                TensorShard s = tensor.get(r);
                out.append("query heads ").append(s.firstHead()).append('+').append(s.headCount())
                        .append(", KV heads ").append(s.firstKvHead()).append('+').append(s.kvHeadCount())
                        .append(", FFN rows ").append(s.firstUnit()).append('+').append(s.unitCount())
                        .append(", vocabulary rows ").append(s.firstVocabularyRow()).append('+').append(s.vocabularyRows());
            } else {
                LayerRange stage = stages.get(r);
                out.append("layers ").append(stage.first()).append("..").append(stage.end() - 1);
            }
        }
        return out.toString();
    }
}
