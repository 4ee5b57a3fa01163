package io.macfleet.provision;

import java.util.List;
import java.util.Optional;

/**
 * A validated playbook: named, typed steps in order.
 *
 * @param name the playbook's name (its file name without .yaml, or its {@code name:} key)
 * @param source where it was read from, for messages (a path, or {@code playbooks/NAME.yaml} from the jar)
 * @param contentHash SHA-256 of the file's text: a run remembers it, a changed playbook starts a new run
 */
public record Playbook(String name, String source, String contentHash, String description, List<PlaybookStep> steps) {

    public Playbook {
        steps = List.copyOf(steps);
    }

    public Optional<PlaybookStep> step(String stepName) {
        return steps.stream().filter(step -> step.name().equals(stepName)).findFirst();
    }

    /** The steps a run with {@code --only} / {@code --from} works on, in playbook order. */
    public List<PlaybookStep> select(String only, String from) {
        if (only != null && from != null) {
            throw new IllegalArgumentException("give --only or --from, not both");
        }
        if (only != null) {
            return List.of(step(only).orElseThrow(() -> unknownStep(only)));
        }
        if (from != null) {
            PlaybookStep first = step(from).orElseThrow(() -> unknownStep(from));
            return steps.subList(steps.indexOf(first), steps.size());
        }
        return steps;
    }

    private IllegalArgumentException unknownStep(String stepName) {
        return new IllegalArgumentException("playbook " + name + " has no step '" + stepName + "'; its steps: "
                + String.join(", ", steps.stream().map(PlaybookStep::name).toList()));
    }
}
