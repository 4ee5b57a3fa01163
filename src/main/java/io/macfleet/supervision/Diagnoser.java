package io.macfleet.supervision;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads one cluster observation (and the run counts of the previous one) into a {@link Diagnosis}. */
final class Diagnoser {

    /** The node's handshake refusal: "node version differs: rank 0 has A, rank 1 has B". */
    private static final Pattern REFUSAL = Pattern.compile("(node version|model) differs: rank (\\d+) has (.+?), rank (\\d+) has (.+)");

    /** Starts by launchd since the cluster last served that make a crash loop. */
    static final int CRASH_LOOP_RUNS = 2;

    private Diagnoser() {
    }

    /**
     * In order of what to act on: a version or model skew first (restarting cannot fix it and RDMA errors may follow
     * from it), then RDMA (a restart would crash again), then ranks down.
     *
     * @param servingRuns launchd run count per rank when the cluster last served (absent ranks: unknown); a rank that
     *                    launchd started twice or more since then and still does not serve is crash-looping (one
     *                    restart is launchd's KeepAlive answering a single crash, which the node recovers from)
     */
    static Diagnosis diagnose(ClusterObservation observation, Map<Integer, Integer> servingRuns) {
        SupervisedCluster cluster = observation.cluster();
        if (observation.ranks().stream().allMatch(rank -> rank.launchd().map(service -> !service.loaded()).orElse(false))) {
            return new Diagnosis.NotDeployed();
        }
        Optional<Diagnosis.Skew> skew = skew(cluster, observation.ranks(), RankObservation::version, "node version")
                .or(() -> skew(cluster, observation.ranks(), RankObservation::model, "model"))
                .or(() -> loggedRefusal(cluster, observation.ranks()));
        if (skew.isPresent()) {
            return skew.get();
        }
        List<String> rdmaMachines = new ArrayList<>();
        List<String> rdmaEvidence = new ArrayList<>();
        for (RankObservation rank : observation.ranks()) {
            if (rank.rdma().failed()) {
                rdmaMachines.add(rank.machine());
                rdmaEvidence.add(rank.machine() + ": " + rank.rdmaEvidence());
            }
        }
        if (!rdmaMachines.isEmpty()) {
            return new Diagnosis.RdmaFailure(rdmaMachines, rdmaEvidence);
        }
        if (observation.serving()) {
            return new Diagnosis.Serving();
        }
        List<String> problems = new ArrayList<>();
        boolean looping = false;
        for (RankObservation rank : observation.ranks()) {
            Integer before = servingRuns.get(rank.rank());
            boolean restarted = before != null && rank.runs().map(runs -> runs >= before + CRASH_LOOP_RUNS).orElse(false);
            if (rank.health() == RankObservation.Health.SERVING) {
                continue;
            }
            looping |= restarted;
            problems.add(describe(rank, restarted));
        }
        return new Diagnosis.RanksDown(problems, looping);
    }

    private static String describe(RankObservation rank, boolean restarted) {
        StringBuilder text = new StringBuilder("rank ").append(rank.rank()).append(" (").append(rank.machine()).append(") ");
        if (rank.launchd().isEmpty()) {
            text.append("not reachable over SSH");
        } else if (!rank.launchd().get().loaded()) {
            text.append("has no node daemon loaded");
        } else if (!rank.daemonRunning()) {
            text.append("daemon ").append(rank.launchd().get().state().isEmpty() ? "not running" : rank.launchd().get().state())
                    .append(describeExit(rank));
        } else {
            text.append(rank.health().name().toLowerCase(java.util.Locale.ROOT));
        }
        if (!rank.healthDetail().isBlank()) {
            text.append(": ").append(rank.healthDetail());
        }
        if (restarted) {
            text.append(" (launchd restarted it, ").append(rank.runs().orElse(0)).append(" runs)");
        }
        return text.toString();
    }

    private static String describeExit(RankObservation rank) {
        return switch (rank.launchd().get().lastExit()) {
            case io.macfleet.deployment.LaunchdService.LastExit.Code code -> ", last exit code " + code.code();
            case io.macfleet.deployment.LaunchdService.LastExit.Signal signal -> ", killed by signal " + signal.number();
            default -> "";
        };
    }

    /** A rank whose announced value differs from the majority (from rank 0's when there is no majority). */
    private static Optional<Diagnosis.Skew> skew(SupervisedCluster cluster, List<RankObservation> ranks,
                                                 Function<RankObservation, Optional<String>> value, String field) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (RankObservation rank : ranks) {
            value.apply(rank).ifPresent(v -> counts.merge(v, 1, Integer::sum));
        }
        if (counts.size() < 2) {
            return Optional.empty();
        }
        String reference = ranks.stream().filter(rank -> rank.rank() == 0).findFirst().flatMap(value).orElse(null);
        String majority = counts.entrySet().stream()
                .max((a, b) -> a.getValue().equals(b.getValue()) ? (a.getKey().equals(reference) ? 1 : b.getKey().equals(reference) ? -1 : 0)
                        : Integer.compare(a.getValue(), b.getValue()))
                .orElseThrow().getKey();
        for (RankObservation rank : ranks) {
            Optional<String> own = value.apply(rank);
            if (own.isPresent() && !own.get().equals(majority)) {
                return Optional.of(new Diagnosis.Skew(rank.rank(), rank.machine(), field, own.get(), majority, cluster.deployCommand()));
            }
        }
        return Optional.empty();
    }

    /**
     * A refused rank exits at once, so its /metrics is rarely there to compare; the refusal it logged names both
     * values. The odd one is the refused rank unless rank 0 itself is the one that differs from the rest.
     */
    private static Optional<Diagnosis.Skew> loggedRefusal(SupervisedCluster cluster, List<RankObservation> ranks) {
        for (RankObservation rank : ranks) {
            if (rank.logRefusal().isEmpty()) {
                continue;
            }
            Matcher matcher = REFUSAL.matcher(rank.logRefusal().get());
            if (!matcher.find()) {
                continue;
            }
            String field = matcher.group(1);
            int firstRank = Integer.parseInt(matcher.group(2));
            String firstValue = matcher.group(3);
            int secondRank = Integer.parseInt(matcher.group(4));
            String secondValue = matcher.group(5).strip();
            // The refusing side names itself first; the refused rank (this log's rank) is the odd one.
            boolean refusedIsSecond = secondRank == rank.rank();
            int odd = refusedIsSecond ? secondRank : firstRank;
            String oddValue = refusedIsSecond ? secondValue : firstValue;
            String otherValue = refusedIsSecond ? firstValue : secondValue;
            String machine = odd < cluster.ranks().size() ? cluster.ranks().get(odd).machine() : "?";
            return Optional.of(new Diagnosis.Skew(odd, machine, field, oddValue, otherValue, cluster.deployCommand()));
        }
        return Optional.empty();
    }
}
