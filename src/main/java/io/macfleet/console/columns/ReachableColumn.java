package io.macfleet.console.columns;

import io.macfleet.config.MacfleetConfig;
import io.macfleet.console.Ages;
import io.macfleet.fleet.MachineState;
import io.macfleet.fleet.Status;
import io.macfleet.fleet.StatusColumn;
import io.macfleet.facts.FactsObservation;
import io.macfleet.facts.Reachability;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;

/** Whether the machine answered over SSH, and how long ago: facts older than the configured age are a warning. */
@ApplicationScoped
public class ReachableColumn implements StatusColumn {

    private final Duration staleAfter;

    @Inject
    public ReachableColumn(MacfleetConfig config) {
        this(config.console().factsStaleAfter());
    }

    public ReachableColumn(Duration staleAfter) {
        this.staleAfter = staleAfter;
    }

    @Override
    public String name() {
        return "Reachable";
    }

    @Override
    public int order() {
        return 100;
    }

    @Override
    public Status cell(MachineState machine) {
        Instant now = machine.now();
        if (machine.reachability().isPresent() && !machine.reachability().get().reachable()) {
            Reachability reached = machine.reachability().get();
            String unreachableSince = Ages.ago(reached.unreachableSince().orElseThrow(), now);
            return Status.problem("unreachable since " + unreachableSince,
                    "no answer over SSH since " + Ages.utc(reached.unreachableSince().get())
                            + reached.lastSeenAt().map(seen -> "; last seen " + Ages.utc(seen)).orElse("; never seen")
                            + reached.lastError().map(error -> "; last error: " + error).orElse(""));
        }
        if (machine.observation().isEmpty()) {
            return Status.problem("never reached", machine.reachability().flatMap(Reachability::lastError)
                    .map(error -> "answered, but its facts could not be read: " + error)
                    .orElse("no facts gathered yet: run `macfleet facts` (or `macfleet cabling check CLUSTER --refresh`)"));
        }
        FactsObservation observation = machine.observation().get();
        // The record of reaching it is newer than the facts when a later gathering answered but failed to parse.
        Instant observedAt = observation.facts().observedAt();
        Instant seenAt = machine.reachability().flatMap(Reachability::lastSeenAt).filter(seen -> seen.isAfter(observedAt)).orElse(observedAt);
        String age = Ages.ago(seenAt, now);
        if (Duration.between(observedAt, now).compareTo(staleAfter) > 0) {
            return Status.warning("last seen " + age, "the latest facts are from " + Ages.utc(observedAt)
                    + ", older than " + staleAfter.toMinutes() + " min: gather again to know whether it is still reachable");
        }
        String error = machine.reachability().flatMap(Reachability::lastError).map(text -> "; the last gathering failed: " + text).orElse("");
        return Status.ok("seen " + age, "answered over SSH at " + Ages.utc(seenAt) + "; facts from " + Ages.utc(observedAt) + error);
    }

    /** A machine is ready only when it answers and its facts are fresh: a stale warning holds it back too. */
    @Override
    public boolean blocksReadiness(Status cell) {
        return cell.level() != Status.Level.OK;
    }
}
