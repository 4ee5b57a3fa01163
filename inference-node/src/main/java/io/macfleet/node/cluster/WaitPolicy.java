package io.macfleet.node.cluster;

/**
 * How a rank waits for a peer's message: spinning on its socket (as MLX's JACCL polls its RDMA completion queue) or
 * parking in {@code select} after a short spin. A parked rank's core goes idle, and the message then wakes a cold core
 * (in a VM, a halted virtual CPU): in a pipeline each stage waits half of every token, so parking cost up to a fifth
 * of the speed here. Spinning costs one busy core per waiting rank, which is free when the rank has its cores to itself
 * and ruinous when ranks share cores (two spinning ranks on one core take it from each other).
 * <p>
 * So a rank decides from what it knows: the ranks of the cluster file on its machine (same {@code machine} name; a
 * real cluster has one rank per Mac, {@code launch-local} puts them all on {@code localhost}) times its threads,
 * against the processors it has. Tensor and pipeline ranks follow the same rule, as RDMA ranks poll: on the quiet
 * 2-core machine, four runs of tensor 2 measured 1.70, 1.28, 1.31 and 1.72x of one process spinning against 1.16,
 * 1.38, 1.54 and 1.49x parking (the VM runs two-thread work either fast or about a third slower, whichever the wait),
 * and with a core per rank nothing else wants the core a rank spins on. Foreign load is the case the rule cannot see:
 * a spinning rank that loses its core parks (the preemption guard in {@link TcpTransport}), and
 * {@code -Dmacfleet.node.wait=park} is for hosts shared with other work (tensor 2 at a load average of 4: 9.26 tokens/s spinning against 20.46 parking). A spin stays bounded by
 * {@code spinNanos} (then it parks), and the heartbeat and receive deadline are checked while spinning, so failure
 * detection is unchanged.
 *
 * @param spinNanos how long a receive spins before it parks
 * @param reason    why, for the startup log and /metrics
 */
public record WaitPolicy(long spinNanos, String reason) {
    /** JVM property that overrides the choice: {@code spin}, {@code park} or {@code auto} (the default: ranks sharing cores park). */
    public static final String PROPERTY = "macfleet.node.wait";
    /** JVM property that overrides the spin length in microseconds (for experiments). */
    public static final String SPIN_MICROS_PROPERTY = "macfleet.node.spin-micros";
    /**
     * A spinning rank's bound: longer than a pipeline stage or a peer's share of a decode step (tens of ms for the
     * models a Mac holds), so it spins through the waits between the tokens of a request; a rank idle between
     * requests parks after this long.
     */
    static final long SPIN_THROUGH_NANOS = 250_000_000L;
    /** A parking rank still spins this long first: a reply often comes sooner than a wake-up takes. */
    static final long PARK_AFTER_NANOS = 50_000L;

    /** The policy from the JVM properties and the facts of this rank. */
    public static WaitPolicy of(ClusterFile cluster, int rank, int threads, int processors) {
        return of(System.getProperty(PROPERTY, "auto"), Long.getLong(SPIN_MICROS_PROPERTY, -1), cluster, rank, threads,
                processors);
    }

    static WaitPolicy of(String choice, long spinMicros, ClusterFile cluster, int rank, int threads, int processors) {
        String machine = cluster.rank(rank).machine();
        long sharing = cluster.ranks().stream().filter(other -> other.machine().equals(machine)).count();
        long busy = sharing * Math.max(1, threads);
        String facts = sharing + (sharing == 1 ? " rank" : " ranks") + " x " + Math.max(1, threads)
                + (threads == 1 ? " thread" : " threads") + " on " + processors + (processors == 1 ? " processor" : " processors")
                + " of machine " + machine;
        WaitPolicy chosen = switch (choice) {
            case "spin" -> new WaitPolicy(SPIN_THROUGH_NANOS, "spin (" + PROPERTY + "=spin; " + facts + ")");
            case "park" -> new WaitPolicy(PARK_AFTER_NANOS, "park (" + PROPERTY + "=park; " + facts + ")");
            case "auto" -> busy <= processors
                    ? new WaitPolicy(SPIN_THROUGH_NANOS, "spin (a core per thread: " + facts + ")")
                    : new WaitPolicy(PARK_AFTER_NANOS, "park (cores shared: " + facts + ")");
            default -> throw new IllegalArgumentException("-D" + PROPERTY + " must be spin, park or auto, got '" + choice + "'");
        };
        if (spinMicros >= 0) {
            return new WaitPolicy(spinMicros * 1000, chosen.reason() + ", spin " + spinMicros + " us (-D"
                    + SPIN_MICROS_PROPERTY + ")");
        }
        return chosen;
    }

    /** True when a receive spins through a whole stage rather than parking soon. */
    public boolean spins() {
        return spinNanos >= SPIN_THROUGH_NANOS;
    }
}
