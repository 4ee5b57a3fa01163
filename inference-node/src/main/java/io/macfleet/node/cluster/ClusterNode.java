package io.macfleet.node.cluster;

import io.macfleet.node.engine.Placement;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.PackedColumns;
import io.macfleet.node.kernel.WeightMatrix;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.Architecture;
import io.macfleet.node.model.Architectures;
import io.macfleet.node.model.DecoderModel;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.model.LayerRange;
import io.macfleet.node.model.LayerWeights;
import io.macfleet.node.model.LlamaConfig;
import io.macfleet.node.model.LlamaModel;
import io.macfleet.node.model.LlamaWeights;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One rank of a cluster: its shard of the model, its KV cache, and the mesh to the other ranks, which it forms,
 * watches (heartbeats, closed connections) and forms again after a failure, without a restart.
 * <p>
 * Rank 0 drives: its {@link #forward} sends each forward pass's command to the other ranks (tensor: to all, which
 * then compute in lockstep with two all-reduces per layer; pipeline: to the next stage with the hidden states,
 * the last stage returning the final hidden state for rank 0 to turn into logits). The other ranks run
 * {@link #serveWorker()}.
 */
public final class ClusterNode implements Placement, AutoCloseable {
    static final int TAG_COMMAND = 1, TAG_HIDDEN = 2, TAG_RESULT = 3;
    static final int OP_FORWARD = 1;
    /**
     * Pipeline prompt processing: positions per micro-batch. Rank 0 sends each micro-batch's hidden states on and
     * starts the next while the later stages work on it, so with n stages the prompt takes about 1/n of the sum of
     * the stages' times plus one micro-batch per extra stage. Prefill is compute-bound at this size, so smaller
     * batches than {@link LlamaModel#MAX_BATCH} cost little; decode (one position) is unaffected.
     */
    static final int MICRO_BATCH = 32;
    /** Backstop wait for a message inside a forward pass; heartbeats catch a stopped peer much sooner. */
    static final long STEP_TIMEOUT_NANOS = 60_000_000_000L;

    private final ClusterFile cluster;
    private final int rank;
    private final ClusterKey key;
    private final ClusterAddresses addresses;
    /** One mesh listener per address of this rank in the cluster file (never the wildcard address). */
    private final List<ServerSocketChannel> listeners = new ArrayList<>();
    private final Heartbeat heartbeat;
    /** The largest message the plan sends (set when the model is placed); a larger frame header fails the peer. */
    private int maximumMessageBytes;
    private final ReentrantLock lock = new ReentrantLock();
    private final CompletableFuture<Void> refused = new CompletableFuture<>();
    private volatile TcpTransport transport;
    private volatile String problem = "the model is loading";
    /** What this rank tells its peers it is (version, model); null until the model is placed. Read by /metrics. */
    private volatile Handshake identity;
    private volatile int epoch;
    private volatile boolean closed;
    private int prefixEpoch = -1;
    private ShardPlan plan;
    private DecoderModel model;
    private KvCache cache;
    private Collectives collectives;
    private long shardBytes;
    private int microBatch = MICRO_BATCH;
    /** How this rank waits for its peers' messages; decided when the model is placed (it needs the thread count). */
    private volatile WaitPolicy waits;
    private int[] command = new int[0];
    private float[] hidden = new float[0];
    /** Tensor parallelism: rank r computes the logits of vocabulary rows [starts[r], starts[r + 1]). */
    private int[] vocabularyStarts;
    /**
     * Where this rank's forward passes spend their time (the bench's per-rank breakdown): wall and this thread's CPU
     * nanoseconds inside forward passes, and of that wall time the waits in all-reduces and in the logits gather.
     * One writer (the thread running forward passes); read by /metrics.
     */
    private volatile long forwardNanos, allReduceWaitNanos, gatherWaitNanos;
    /** JVM property that turns on the per-phase timing of forward passes ({@link #phaseNanos}; cluster-bench sets it). */
    public static final String PHASE_PROFILE_PROPERTY = "macfleet.node.phase-profile";
    /** Wall nanoseconds per {@link LlamaModel.Phase} of this rank's forward passes; null unless profiling. */
    private long[] phaseNanos;

    /** A rank without a cluster key: only for a cluster whose addresses are all loopback ones (one host). */
    public ClusterNode(ClusterFile cluster, int rank) throws IOException {
        this(cluster, rank, ClusterKey.none());
    }

    /**
     * A rank that proves {@code key} to its peers and accepts only peers that prove it. The mesh (TCP) and heartbeats
     * (UDP) listen on this rank's addresses from the cluster file only. Without a real key the cluster file must
     * name loopback addresses only: a mesh between machines without a key is anybody's.
     */
    public ClusterNode(ClusterFile cluster, int rank, ClusterKey key) throws IOException {
        this.cluster = cluster;
        this.rank = rank;
        this.key = key;
        ClusterFile.Rank me = cluster.rank(rank);
        addresses = ClusterAddresses.resolve(cluster);
        if (!key.secret() && !addresses.loopbackOnly()) {
            throw new IllegalArgumentException("the cluster file names addresses of a network (" + String.join(", ",
                    addresses.networkAddresses()) + "): give every rank the cluster's key with --cluster-key FILE "
                    + "(without one, anybody who reaches the mesh port could join the cluster)");
        }
        if (!key.secret() && cluster.size() > 1) {
            System.err.println("inference-node: rank " + rank + ": the mesh runs without a cluster key (every address is a "
                    + "loopback one): for one host and tests only");
        }
        Heartbeat beating = null;
        try {
            for (java.net.InetAddress own : addresses.of(rank)) {
                ServerSocketChannel listener = ServerSocketChannel.open();
                listeners.add(listener);
                try {
                    listener.bind(new InetSocketAddress(own, me.clusterPort()));
                } catch (IOException e) {
                    throw new IOException("rank " + rank + " cannot listen on cluster port " + own.getHostAddress() + ":"
                            + me.clusterPort() + ": " + e.getMessage(), e);
                }
            }
            beating = new Heartbeat(cluster, addresses, rank);
        } catch (IOException e) {
            closeListeners();
            throw e.getMessage().startsWith("rank ") ? e
                    : new IOException("rank " + rank + " cannot listen on cluster port " + me.clusterPort() + ": " + e.getMessage(), e);
        }
        heartbeat = beating;
    }

    private void closeListeners() {
        for (ServerSocketChannel listener : listeners) {
            try {
                listener.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** The largest message of this plan: a batch of hidden states, a rank's logits, or a command of a whole context. */
    static int maximumMessageBytes(LlamaConfig config, int contextLength) {
        long elements = Math.max((long) LlamaModel.MAX_BATCH * config.dimension(), config.vocabulary()) + contextLength + 8;
        return (int) Math.min(Integer.MAX_VALUE - 64, elements * Float.BYTES);
    }

    public int rank() {
        return rank;
    }

    public ClusterFile cluster() {
        return cluster;
    }

    /** Null while every rank is connected; otherwise what is missing (for /health). */
    public String problem() {
        return transport != null ? null : problem;
    }

    public ShardPlan plan() {
        return plan;
    }

    /** Bytes of weights this rank reads per token (its shard plus replicated parts). */
    public long shardBytes() {
        return shardBytes;
    }

    public long kvCacheBytes() {
        return cache == null ? 0 : cache.byteSize();
    }

    public long bytesSent() {
        TcpTransport current = transport;
        return current == null ? 0 : current.bytesSent();
    }

    /** How this rank waits for its peers (spinning or parking), or null before the model is placed. */
    public WaitPolicy waitPolicy() {
        return waits;
    }

    /** Long spins cut short since the cluster formed because the spinning rank was preempted. */
    public long spinsPreempted() {
        TcpTransport current = transport;
        return current == null ? 0 : current.spinsPreempted();
    }

    public long waitNanos() {
        TcpTransport current = transport;
        return current == null ? 0 : current.waitNanos();
    }

    /** A copy of the per-phase wall then CPU nanoseconds, or null unless {@link #PHASE_PROFILE_PROPERTY} is set. */
    public long[] phaseNanos() {
        long[] phases = phaseNanos;
        return phases == null ? null : phases.clone();
    }

    /** Wall nanoseconds in forward passes, and of them the waits in all-reduces and in the logits gather. */
    public long[] forwardTimes() {
        return new long[] {forwardNanos, allReduceWaitNanos, gatherWaitNanos};
    }

    /** Positions per pipeline micro-batch (tests use small ones to exercise short prompts). */
    void microBatch(int positions) {
        if (positions < 1 || positions > LlamaModel.MAX_BATCH) {
            throw new IllegalArgumentException("a micro-batch holds 1.." + LlamaModel.MAX_BATCH + " positions, got " + positions);
        }
        microBatch = positions;
    }

    /** The handshake field (e.g. "node version", "model") this rank announces, or null before the model is placed. */
    public String identity(String field) {
        Handshake current = identity;
        return current == null ? null : current.fields().get(field);
    }

    /** Completes exceptionally when a peer refused this rank's handshake (different version, model or plan). */
    public CompletableFuture<Void> refusal() {
        return refused;
    }

    /** The node version ranks must share: the jar's, unless {@code -Dmacfleet.node.version} says otherwise (tests). */
    static String nodeVersion() {
        String version = System.getProperty("macfleet.node.version");
        if (version == null) {
            version = ClusterNode.class.getPackage().getImplementationVersion();
        }
        return version == null ? "0.1.0-SNAPSHOT" : version;
    }

    /** Model identity: file size and SHA-256 of everything before the tensor data (header, metadata, tensor table). */
    static String modelIdentity(GgufFile file) {
        try (RandomAccessFile raf = new RandomAccessFile(file.path().toFile(), "r")) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[65536];
            long remaining = file.dataOffset();
            while (remaining > 0) {
                int read = raf.read(buffer, 0, (int) Math.min(buffer.length, remaining));
                if (read < 0) {
                    break;
                }
                digest.update(buffer, 0, read);
                remaining -= read;
            }
            return file.fileSize() + " bytes, header sha256 " + HexFormat.of().formatHex(digest.digest()).substring(0, 16);
        } catch (IOException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot hash the model header: " + e.getMessage(), e);
        }
    }

    /** The plan every rank computes from the model and the cluster file. */
    public static ShardPlan plan(GgufFile file, LlamaConfig config, ClusterFile cluster) {
        if (cluster.parallelism() == ClusterFile.Parallelism.PIPELINE) {
            return ShardPlan.pipeline(config, cluster.weights());
        }
        if (!Architectures.of(file, config).tensorParallel()) {
            throw file.error("tensor parallelism is not implemented for architecture '" + config.architecture()
                    + "'; use \"parallelism\": \"pipeline\" in the cluster file");
        }
        int outputBlock = file.tensor("blk.0.attn_output.weight").type().blockSize();
        config = Architectures.of(file, config).attentionOutputView(file, config);
        if (config.mixtureOfExperts()) {
            // Expert parallelism: the attention splits as for a dense model, the experts are dealt out whole
            // (granule 1) by weight; every rank routes every token (the router is replicated) and adds the selected
            // experts it holds, so the ranks' outputs are partial sums for the same all-reduce.
            return ShardPlan.tensor(config, cluster.weights(), outputBlock,
                    new ShardPlan.FeedForwardSharding(config.experts(), 1));
        }
        int downBlock = file.tensor("blk.0.ffn_down.weight").type().blockSize();
        return ShardPlan.tensor(config, cluster.weights(), outputBlock, ShardPlan.FeedForwardSharding.dense(config, downBlock));
    }

    /** Overrides the memory {@link #checkFits} compares with (bytes; tests, or a rank that must leave room for others). */
    static final String MEMORY_PROPERTY = "macfleet.node.memory-bytes";

    /**
     * Refuses a rank whose share of the model file is larger than its machine's memory, with the numbers: its weights
     * would be paged in from disk on every token. The share is the rank's weight of the file (tensor) or its layers'
     * fraction (pipeline; rank 0 also holds the embedding and output matrices, within the same estimate).
     */
    static void checkFits(GgufFile file, LlamaConfig config, ShardPlan plan, double[] weights, int rank, long memoryBytes) {
        double share;
        if (plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
            double total = 0;
            for (double weight : weights) {
                total += weight;
            }
            share = weights[rank] / total;
        } else {
            share = (double) plan.stages().get(rank).count() / config.layers();
        }
        long needed = (long) (file.fileSize() * share);
        if (needed > memoryBytes) {
            throw file.error(String.format(java.util.Locale.ROOT, "rank %d would hold about %.2f GB of the %.2f GB model"
                            + " (%.0f%% by the cluster file's %s plan) but its machine has %.2f GB of memory; give it a"
                            + " smaller weight, add ranks, or use a smaller quantization", rank, needed / 1e9,
                    file.fileSize() / 1e9, 100 * share, plan.parallelism().label(), memoryBytes / 1e9));
        }
    }

    /** Loads this rank's part of the model and starts forming the mesh. */
    @Override
    public Placed place(GgufFile file, LlamaConfig config, int contextLength, WorkerPool pool) {
        plan = plan(file, config, cluster);
        long physical = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize();
        checkFits(file, config, plan, cluster.weights(), rank, Long.getLong(MEMORY_PROPERTY, physical));
        LlamaWeights weights = null;
        LlamaConfig local = config;
        model = null;
        if (plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
            ShardPlan.TensorShard shard = plan.tensor().get(rank);
            vocabularyStarts = new int[cluster.size() + 1];
            for (int r = 0; r < cluster.size(); r++) {
                vocabularyStarts[r + 1] = vocabularyStarts[r] + plan.tensor().get(r).vocabularyRows();
            }
            DecoderModel own = Architectures.of(file, config).loadTensorShard(file, config, new Architecture.TensorSlice(
                    shard.firstHead(), shard.headCount(), shard.firstUnit(), shard.unitCount(), config.experts(),
                    shard.firstVocabularyRow(), shard.vocabularyRows()), pool);
            if (own != null) { // an architecture that shards itself (column slices stay views of the file)
                model = own;
                local = own.config();
                cache = model.allocateCache(contextLength);
            }
        }
        if (model == null && plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
            ShardPlan.TensorShard shard = plan.tensor().get(rank);
            local = config.shard(shard.headCount(), shard.kvHeadCount(), shard.unitCount());
            LlamaWeights full = LlamaWeights.load(file, config);
            LayerWeights[] blocks = new LayerWeights[full.blocks().length];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = full.blocks()[i].shard(config, shard.firstHead(), shard.headCount(), shard.firstKvHead(),
                        shard.kvHeadCount(), shard.firstUnit(), shard.unitCount());
            }
            if (cluster.size() > 1) {
                packColumnSlices(blocks);
            }
            // The embedding is replicated (each rank reads one row per token; mapped pages nobody reads cost no
            // memory), the output matrix split by vocabulary rows: each rank reads and holds its share of it and
            // rank 0 gathers the logits (vocabulary x 4 bytes per token from the others together).
            weights = new LlamaWeights(local, full.layers(), full.tokenEmbedding(), blocks, full.outputNorm(),
                    full.output().rowSlice(shard.firstVocabularyRow(), shard.vocabularyRows()), full.ropeFrequencyFactors());
            vocabularyStarts = new int[cluster.size() + 1];
            for (int r = 0; r < cluster.size(); r++) {
                vocabularyStarts[r + 1] = vocabularyStarts[r] + plan.tensor().get(r).vocabularyRows();
            }
            cache = KvCache.allocate(local, contextLength);
            model = new LlamaModel(weights, pool);
        } else if (plan.parallelism() == ClusterFile.Parallelism.PIPELINE) {
            LayerRange stage = plan.stages().get(rank);
            model = Architectures.of(file, config).load(file, config, stage, pool);
            weights = model instanceof LlamaModel llama ? llama.weights() : null;
            local = config;
            cache = model.allocateCache(contextLength);
        }
        if (Boolean.getBoolean(PHASE_PROFILE_PROPERTY)) {
            phaseNanos = new long[LlamaModel.Phase.values().length];
            model.profileWall(phaseNanos); // wall only: a platform thread's CPU clock costs up to milliseconds a read here
        }
        shardBytes = 0;
        if (weights == null) {
            shardBytes = model.bytesPerToken(); // another architecture's stage: its layers, embedding row and output
        } else {
            for (LayerWeights block : weights.blocks()) {
                shardBytes += block.matrixBytes();
            }
            shardBytes += weights.tokenEmbedding().byteSize() / weights.tokenEmbedding().rows();
            if (rank == 0 || plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
                shardBytes += weights.output().byteSize(); // tensor: this rank's vocabulary rows; pipeline: rank 0 alone
            }
        }
        command = new int[contextLength + 8];
        maximumMessageBytes = maximumMessageBytes(config, contextLength);
        hidden = new float[LlamaModel.MAX_BATCH * config.dimension()];
        Handshake mine = Handshake.of(nodeVersion(), modelIdentity(file), plan.parallelism().label(), cluster.size(),
                contextLength, plan.describe());
        identity = mine;
        waits = WaitPolicy.of(cluster, rank, pool.size(), Runtime.getRuntime().availableProcessors());
        System.err.println("inference-node: rank " + rank + " waits for its peers: " + waits.reason());
        System.err.printf("inference-node: rank %d of %d (%s): %s; weights read per token %d MB, KV cache %d MB%n",
                rank, cluster.size(), plan.parallelism().label(), plan.describe(), shardBytes >> 20, cache.byteSize() >> 20);
        Thread.ofPlatform().daemon().name("cluster-former").start(() -> formLoop(mine));
        return new Placed(model, cache, new ForwardPass() {
            @Override
            public float[] forward(int[] tokens, int from, int count, int position) {
                return ClusterNode.this.forward(tokens, from, count, position);
            }

            @Override
            public boolean prefixValid() {
                boolean valid = prefixEpoch == epoch;
                prefixEpoch = epoch;
                return valid;
            }
        });
    }

    /**
     * The attention output and down projections of a tensor shard are column slices; copied so their rows are
     * contiguous, they stream faster ({@link PackedColumns}). Without a writable temporary directory the slices stay
     * views of the model file (slower, same results).
     */
    private void packColumnSlices(LayerWeights[] blocks) {
        WeightMatrix[] slices = new WeightMatrix[2 * blocks.length];
        for (int i = 0; i < blocks.length; i++) {
            slices[2 * i] = blocks[i].output();
            slices[2 * i + 1] = blocks[i].down();
        }
        try {
            WeightMatrix[] packed = PackedColumns.pack(slices, Path.of(System.getProperty("java.io.tmpdir")));
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = blocks[i].withOutputAndDown(packed[2 * i], packed[2 * i + 1]);
            }
        } catch (IOException | InternalError e) { // InternalError: a mapped page could not be written (disk full)
            System.err.println("inference-node: rank " + rank + ": cannot copy the column slices into a scratch file ("
                    + e.getMessage() + "); reading them from the model file");
        }
    }

    private void formLoop(Handshake mine) {
        problem = "forming the cluster";
        while (!closed) {
            TcpTransport current = transport;
            if (current != null) {
                sleep(Heartbeat.INTERVAL_MILLIS);
                if (rank == 0 && lock.tryLock()) {
                    try {
                        if (transport == current) {
                            current.probe();
                        }
                    } catch (Transport.PeerFailedException e) {
                        fail(current, e);
                    } finally {
                        lock.unlock();
                    }
                }
                continue;
            }
            try {
                TcpTransport formed = TcpTransport.form(cluster, rank, listeners,
                        new MeshHandshake(cluster, addresses, key, rank, mine), heartbeat, waits, () -> closed,
                        status -> problem = status, maximumMessageBytes);
                if (formed != null) {
                    collectives = new Collectives(formed, STEP_TIMEOUT_NANOS);
                    if (plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
                        model.collective(tensorCollective(collectives, formed));
                    }
                    epoch++;
                    transport = formed;
                    System.err.println("inference-node: rank " + rank + ": cluster of " + cluster.size() + " formed");
                }
            } catch (TcpTransport.HandshakeRefusedException e) {
                problem = e.getMessage();
                refused.completeExceptionally(e);
                return;
            } catch (IOException | RuntimeException e) {
                problem = "forming the cluster failed: " + e.getMessage();
                sleep(500);
            }
        }
    }

    /** The all-reduces of the layers and the gather of the vocabulary-parallel logits, over this mesh. */
    private LlamaModel.Collective tensorCollective(Collectives mesh, TcpTransport link) {
        int[] starts = vocabularyStarts;
        return new LlamaModel.Collective() {
            @Override
            public void allReduce(float[] values, int length) {
                long waited = link.waitNanos();
                mesh.allReduce(values, length);
                allReduceWaitNanos += link.waitNanos() - waited;
            }

            @Override
            public int firstVocabularyRow() {
                return starts[rank];
            }

            @Override
            public void gatherLogits(float[] logits) {
                long waited = link.waitNanos();
                mesh.gather(logits, starts);
                gatherWaitNanos += link.waitNanos() - waited;
            }
        };
    }

    /** A tensor forward pass, timed into {@link #forwardTimes()}. */
    private float[] timedForward(int[] tokens, int from, int count, int position) {
        // No thread CPU clock here: on a platform thread (the workers') a read costs up to milliseconds on a VM.
        long wall = System.nanoTime();
        float[] logits = model.forward(tokens, from, count, position, cache, true);
        forwardNanos += System.nanoTime() - wall;
        return logits;
    }

    private void fail(TcpTransport failed, Transport.PeerFailedException e) {
        if (transport == failed) {
            transport = null;
            problem = "rank " + e.peer() + " is missing: " + e.getMessage();
            failed.close();
            System.err.println("inference-node: rank " + rank + ": " + problem + "; forming the cluster again");
        }
    }

    private TcpTransport require() {
        TcpTransport current = transport;
        if (current == null) {
            throw new Placement.UnavailableException("the cluster is not complete: " + problem);
        }
        return current;
    }

    /** Rank 0: one forward pass over the whole cluster. */
    float[] forward(int[] tokens, int from, int count, int position) {
        lock.lock();
        TcpTransport current = null;
        try {
            current = require();
            if (plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
                ensureCommand(count);
                command[0] = OP_FORWARD;
                command[1] = position;
                command[2] = count;
                System.arraycopy(tokens, from, command, 3, count);
                for (int peer = 1; peer < current.size(); peer++) {
                    current.send(peer, TAG_COMMAND, command, 0, 3 + count);
                }
                return timedForward(tokens, from, count, position);
            }
            int dim = model.config().dimension();
            if (current.size() == 1) {
                return model.forward(tokens, from, count, position, cache);
            }
            // Micro-batches: while the next stages work on one, this rank computes the next (sends never wait).
            for (int done = 0; done < count; done += microBatch) {
                int batch = Math.min(microBatch, count - done);
                float[] states = model.forwardStage(tokens, from + done, null, batch, position + done, cache);
                command[0] = OP_FORWARD;
                command[1] = position + done;
                command[2] = batch;
                command[3] = done + batch == count ? 1 : 0;
                current.send(1, TAG_COMMAND, command, 0, 4);
                current.send(1, TAG_HIDDEN, states, 0, batch * dim);
            }
            current.receive(current.size() - 1, TAG_RESULT, hidden, 0, STEP_TIMEOUT_NANOS);
            return model.logits(hidden, 0);
        } catch (Transport.PeerFailedException e) {
            fail(current, e);
            throw new Placement.UnavailableException("rank " + e.peer() + " failed during the request: " + e.getMessage());
        } catch (RuntimeException e) {
            if (current != null) {
                // the other ranks may be half way through this step: start them afresh rather than leave them waiting
                fail(current, new Transport.PeerFailedException(rank, "rank 0 failed a forward pass: " + e));
            }
            throw e;
        } finally {
            lock.unlock();
        }
    }

    private void ensureCommand(int count) {
        if (command.length < count + 8) {
            command = new int[count + 8];
        }
    }

    /** Ranks other than 0: runs the forward passes rank 0 asks for, forever (forming the mesh again after failures). */
    public void serveWorker() {
        while (!closed) {
            TcpTransport current = transport;
            if (current == null) {
                if (refused.isCompletedExceptionally()) {
                    return;
                }
                sleep(50);
                continue;
            }
            try {
                if (plan.parallelism() == ClusterFile.Parallelism.TENSOR) {
                    int got = current.receive(0, TAG_COMMAND, command, 0, 0);
                    if (got < 3 || command[0] != OP_FORWARD) {
                        throw new Transport.PeerFailedException(0, "rank 0 sent an unknown command");
                    }
                    // with logits: this rank's vocabulary rows, sent to rank 0
                    timedForward(command, 3, command[2], command[1]);
                } else {
                    int previous = rank - 1;
                    current.receive(previous, TAG_COMMAND, command, 0, 0);
                    int position = command[1], batch = command[2];
                    boolean last = command[3] == 1;
                    current.receive(previous, TAG_HIDDEN, hidden, 0, STEP_TIMEOUT_NANOS);
                    float[] states = model.forwardStage(null, 0, hidden, batch, position, cache);
                    int dim = model.config().dimension();
                    if (rank + 1 < current.size()) {
                        current.send(rank + 1, TAG_COMMAND, command, 0, 4);
                        current.send(rank + 1, TAG_HIDDEN, states, 0, batch * dim);
                    } else if (last) {
                        current.send(0, TAG_RESULT, states, (batch - 1) * dim, dim);
                    }
                }
            } catch (Transport.PeerFailedException e) {
                fail(current, e);
            } catch (RuntimeException e) {
                // a step this rank cannot run: break the cluster so rank 0 answers 503 at once instead of waiting
                fail(current, new Transport.PeerFailedException(rank, "rank " + rank + " failed a forward pass: " + e));
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        closed = true;
        TcpTransport current = transport;
        if (current != null) {
            current.close();
        }
        heartbeat.close();
        closeListeners();
    }
}
