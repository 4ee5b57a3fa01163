package io.macfleet.facts;

import io.macfleet.inventory.Machine;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** Differences between what the inventory says a machine is and what its latest facts say. */
public final class Drift {

    /**
     * One difference.
     *
     * @param field serialNumber, memoryGb, model, macosVersion, or facts (none gathered yet)
     */
    public record Difference(String machine, String field, String expected, String observed, String message) {
    }

    /** A machine's drift against its latest facts; {@code observedAt} is null when it has no facts. */
    public record Report(String machine, java.time.Instant observedAt, List<Difference> differences) {
        public Report {
            differences = List.copyOf(differences);
        }

        public boolean drifted() {
            return !differences.isEmpty();
        }
    }

    private Drift() {
    }

    /**
     * Compares the stored inventory entry (and its cluster's target macOS version, if any) with the facts. Only
     * what the inventory states is compared.
     */
    public static Report compare(Machine machine, String targetMacosVersion, MachineFacts facts) {
        String name = machine.name();
        if (facts == null) {
            return new Report(name, null, List.of(new Difference(name, "facts", "gathered", "none",
                    name + ": no facts gathered yet (run `macfleet facts " + name + "`)")));
        }
        List<Difference> differences = new ArrayList<>();
        String serial = machine.serialNumber();
        if (serial != null && !serial.equalsIgnoreCase(facts.serialNumber())) {
            differences.add(new Difference(name, "serialNumber", serial, facts.serialNumber(),
                    name + ": serial number is " + facts.serialNumber() + ", the inventory says " + serial
                            + " (a different Mac answers at this address, or the inventory is wrong)"));
        }
        Integer gigabytes = machine.memoryGb();
        if (gigabytes != null && gigabytes.longValue() != facts.memoryGigabytes()) {
            differences.add(new Difference(name, "memoryGb", String.valueOf(gigabytes.longValue()), String.valueOf(facts.memoryGigabytes()),
                    name + ": has " + facts.memoryGigabytes() + " GB of memory, the inventory says " + gigabytes.longValue() + " GB"));
        }
        String model = machine.model();
        if (model != null && !Objects.equals(model, facts.modelIdentifier())) {
            differences.add(new Difference(name, "model", model, facts.modelIdentifier(),
                    name + ": is a " + facts.modelIdentifier() + " (" + facts.modelName() + ", " + facts.chip() + "), the inventory says " + model));
        }
        if (targetMacosVersion != null && !sameVersion(targetMacosVersion, facts.macosVersion())) {
            differences.add(new Difference(name, "macosVersion", targetMacosVersion, facts.macosVersion(),
                    name + ": runs macOS " + facts.macosVersion() + " (" + facts.macosBuild() + "), the cluster "
                            + machine.cluster() + " targets " + targetMacosVersion));
        }
        return new Report(name, facts.observedAt(), differences);
    }

    /** The observed version matches the target on every component the target names: 26.2 accepts 26.2 and 26.2.1. */
    static boolean sameVersion(String target, String observed) {
        String[] wanted = target.split("\\.");
        String[] seen = observed.split("\\.");
        for (int index = 0; index < wanted.length; index++) {
            String component = index < seen.length ? seen[index] : "0";
            if (!stripZeros(wanted[index]).equals(stripZeros(component))) {
                return false;
            }
        }
        return true;
    }

    private static String stripZeros(String number) {
        String stripped = number.replaceFirst("^0+(?=.)", "");
        return stripped;
    }
}
