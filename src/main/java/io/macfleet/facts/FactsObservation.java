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
}
