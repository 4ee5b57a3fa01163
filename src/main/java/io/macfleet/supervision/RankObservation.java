package io.macfleet.supervision;

import io.macfleet.deployment.LaunchdService;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * What one look at one rank found: its HTTP health, launchd's view of its daemon, the version and model it
 * announces, its RDMA state and any failure signature in its log.
 *
 * @param healthDetail the node's own sentence (e.g. "rank 1 is missing: ..."), or why it could not be asked
 * @param launchd empty when the machine could not be reached over SSH
 * @param version the node version from its /metrics, when it answered
 * @param model the model identity from its /metrics (size and header digest), when it answered
 * @param rdmaEvidence what shows the RDMA state (a log line, "ibv_devinfo did not answer within 5 s"), or empty
 * @param logRefusal a handshake refusal the node logged ("node version differs: rank 0 has A, rank 1 has B"), or empty
 */
public record RankObservation(int rank, String machine, Health health, String healthDetail, Optional<LaunchdService> launchd,
                              Optional<String> version, Optional<String> model, Rdma rdma, String rdmaEvidence,
                              Optional<String> logRefusal, OptionalDouble tokensPerSecond,
                              OptionalDouble timeToFirstTokenSeconds) {

    /** The node's /health answer. */
    public enum Health {
        /** 200: the rank is part of a formed cluster. */
        SERVING,
        /** 503 while loading the model or forming the cluster. */
        STARTING,
        /** 503 naming a missing rank or a failure. */
        DEGRADED,
        /** No answer: the process is not there or the machine is not reachable. */
        UNREACHABLE
    }

    /** RDMA over Thunderbolt on the rank's machine. */
    public enum Rdma {
        /** Enabled, devices listed, ibv_devinfo answers, no failure in the log. */
        HEALTHY,
        /** Not switched on (rdma_ctl status disabled): the cluster uses TCP here, nothing to watch. */
        NOT_IN_USE,
        /** Enabled, but ibv_devinfo finds no device. */
        DEVICES_MISSING,
        /** ibv_devinfo did not answer in time: the RDMA stack is wedged. */
        NOT_ANSWERING,
        /** The node's log shows an RDMA failure signature. */
        FAILURE_IN_LOG,
        /** The machine could not be asked. */
        UNKNOWN;

        public boolean failed() {
            return this == DEVICES_MISSING || this == NOT_ANSWERING || this == FAILURE_IN_LOG;
        }
    }

    public boolean daemonRunning() {
        return launchd.map(LaunchdService::running).orElse(false);
    }

    public Optional<Long> pid() {
        return launchd.flatMap(service -> service.pid().isPresent() ? Optional.of(service.pid().getAsLong()) : Optional.empty());
    }

    public Optional<Integer> runs() {
        return launchd.flatMap(service -> service.runs().isPresent() ? Optional.of(service.runs().getAsInt()) : Optional.empty());
    }
}
