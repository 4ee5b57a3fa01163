package io.macfleet.supervision;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;

/**
 * What a cluster observation means for the supervisor; {@link #explain()} is the sentence operators read. Stored in
 * the database as JSON (the shared supervision status) under these type names, which stay when classes are renamed.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({
        @JsonSubTypes.Type(value = Diagnosis.NotDeployed.class, name = "not-deployed"),
        @JsonSubTypes.Type(value = Diagnosis.Serving.class, name = "serving"),
        @JsonSubTypes.Type(value = Diagnosis.RanksDown.class, name = "ranks-down"),
        @JsonSubTypes.Type(value = Diagnosis.Skew.class, name = "skew"),
        @JsonSubTypes.Type(value = Diagnosis.RdmaFailure.class, name = "rdma-failure")})
public sealed interface Diagnosis {

    String explain();

    /** No rank's machine has the node's daemon loaded: nothing deployed yet, nothing to supervise. */
    record NotDeployed() implements Diagnosis {
        @Override
        public String explain() {
            return "not deployed";
        }
    }

    /** Every rank is formed and serving. */
    record Serving() implements Diagnosis {
        @Override
        public String explain() {
            return "serving";
        }
    }

    /**
     * One or more ranks are down, not formed, or restarting in a loop: a tensor-parallel cluster cannot serve
     * without every rank.
     *
     * @param problems one sentence per rank that is not serving
     * @param crashLooping launchd restarted a rank since the last look and it is still not serving
     */
    record RanksDown(List<String> problems, boolean crashLooping) implements Diagnosis {
        public RanksDown {
            problems = List.copyOf(problems);
        }

        @Override
        public String explain() {
            return (crashLooping ? "restarting in a loop: " : "not serving: ") + String.join("; ", problems);
        }
    }

    /**
     * A rank runs another node version or model than the rest: the ranks refuse to form, and restarting them
     * changes nothing; the deploy that puts the same version on every machine does.
     *
     * @param field "node version" or "model"
     */
    record Skew(int rank, String machine, String field, String rankValue, String othersValue, String fixCommand)
            implements Diagnosis {
        @Override
        public String explain() {
            return "rank " + rank + " (" + machine + ") has " + field + " " + rankValue + ", the other ranks have "
                    + othersValue + ": the cluster refuses to form; fix: " + fixCommand;
        }
    }

    /**
     * RDMA over Thunderbolt failed on some machines; once wedged, only a reboot of every machine of the cluster
     * recovers it (exo #1847, ml-explore/mlx #3207).
     *
     * @param evidence one sentence per machine
     */
    record RdmaFailure(List<String> machines, List<String> evidence) implements Diagnosis {
        public RdmaFailure {
            machines = List.copyOf(machines);
            evidence = List.copyOf(evidence);
        }

        @Override
        public String explain() {
            return "RDMA failed: " + String.join("; ", evidence);
        }
    }
}
