package io.macfleet.node.cluster;

import io.macfleet.node.engine.Placement;
import io.macfleet.node.gguf.GgufFile;
import io.macfleet.node.kernel.WorkerPool;
import io.macfleet.node.model.LlamaConfig;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The ranks of a cluster as threads of the test JVM, over real loopback TCP: the code path of separate processes. */
final class InProcessCluster implements AutoCloseable {
    final List<ClusterNode> nodes = new ArrayList<>();
    private final List<GgufFile> files = new ArrayList<>();
    private final List<WorkerPool> pools = new ArrayList<>();
    final Placement.Placed root;

    InProcessCluster(Path model, int ranks, ClusterFile.Parallelism parallelism, double[] weights, int context) throws IOException {
        int[] ports = LaunchLocal.freePorts(ranks);
        String text = ClusterFile.loopback(ranks, parallelism, ports, LaunchLocal.freePorts(ranks));
        if (weights != null) {
            for (int r = 0; r < ranks; r++) {
                text = text.replace("\"rank\":" + r + ",", "\"rank\":" + r + ",\"weight\":" + weights[r] + ",");
            }
        }
        ClusterFile cluster = ClusterFile.parse(text, "test");
        Placement.Placed rootPlaced = null;
        for (int r = 0; r < ranks; r++) {
            ClusterNode node = new ClusterNode(cluster, r);
            nodes.add(node);
            GgufFile file = GgufFile.open(model);
            files.add(file);
            WorkerPool pool = new WorkerPool(1);
            pools.add(pool);
            Placement.Placed placed = node.place(file, LlamaConfig.from(file), context, pool);
            if (r == 0) {
                rootPlaced = placed;
            } else {
                Thread.ofPlatform().daemon().name("test-rank-" + r).start(node::serveWorker);
            }
        }
        root = rootPlaced;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (nodes.stream().anyMatch(n -> n.problem() != null)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cluster did not form: " + nodes.getFirst().problem());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void close() {
        nodes.forEach(ClusterNode::close);
        pools.forEach(WorkerPool::close);
        files.forEach(GgufFile::close);
    }
}
