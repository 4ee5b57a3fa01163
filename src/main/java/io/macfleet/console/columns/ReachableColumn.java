package io.macfleet.console.columns;

import io.macfleet.config.MacfleetConfig;
import io.macfleet.console.Ages;
import io.macfleet.console.MachineState;
import io.macfleet.console.Status;
import io.macfleet.console.StatusColumn;
import io.macfleet.facts.FactsObservation;
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
        if (machine.observation().isEmpty()) {
            return Status.problem("never reached", "no facts gathered yet: run `macfleet facts` (or `macfleet cabling check CLUSTER --refresh`)");
        }
        FactsObservation observation = machine.observation().get();
        Instant now = machine.now();
        Instant observedAt = observation.facts().observedAt();
        String age = Ages.ago(observedAt, now);
        if (Duration.between(observedAt, now).compareTo(staleAfter) > 0) {
            return Status.warning("last seen " + age, "the latest facts are from " + Ages.utc(observedAt)
                    + ", older than " + staleAfter.toMinutes() + " min: gather again to know whether it is still reachable");
        }
        return Status.ok("seen " + age, "answered over SSH at " + Ages.utc(observedAt));
    }
}
