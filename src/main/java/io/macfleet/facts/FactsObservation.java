package io.macfleet.facts;

import java.util.Map;
import java.util.TreeMap;

/**
 * One gathering of one machine: the parsed facts and the command output they came from (kept so that later
 * checks, e.g. the cabling check, can read what they need from the same observation).
 *
 * @param outputs standard output of each command, keyed by the command line
 */
public record FactsObservation(MachineFacts facts, Map<String, String> outputs) {

    public FactsObservation {
        outputs = java.util.Collections.unmodifiableMap(new TreeMap<>(outputs));
    }

    public String machine() {
        return facts.machine();
    }

    /**
     * The Thunderbolt buses of the stored output, parsed by the same parser the gathering used.
     *
     * @throws FactsGatheringException when the output is missing or unreadable
     */
    public ThunderboltFacts thunderbolt() {
        return FactsGatherer.thunderbolt(machine(), outputs);
    }

    /**
     * The hardware ports of the stored output, parsed by the same parser the gathering used.
     *
     * @throws FactsGatheringException when the output is missing or unreadable
     */
    public HardwarePorts hardwarePorts() {
        return FactsGatherer.hardwarePorts(machine(), outputs);
    }

    /**
     * The RDMA port state of each device ({@code ibv_devinfo}), if this observation recorded it and it was readable
     * (an unreadable one is named in the facts' {@code unreadableFacts}).
     */
    public java.util.Optional<Map<String, String>> rdmaPortStates() {
        if (!facts.read(FactsGatherer.RDMA_PORTS_FACT)) {
            return java.util.Optional.empty();
        }
        return FactsGatherer.rdmaPortStates(machine(), outputs);
    }

    /**
     * {@code iogpu.wired_limit_mb} (MiB; 0: macOS's default share), if this observation recorded it and it was readable.
     */
    public java.util.OptionalLong wiredLimitMegabytes() {
        if (!facts.read(FactsGatherer.WIRED_LIMIT_FACT)) {
            return java.util.OptionalLong.empty();
        }
        return FactsGatherer.wiredLimitMegabytes(machine(), outputs);
    }
}
