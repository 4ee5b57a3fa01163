package io.macfleet.inventory;

import java.util.List;

/**
 * What applying an inventory would change in the stored desired state, like `terraform plan`.
 */
public record Plan(List<Change> changes) {

    public Plan {
        changes = List.copyOf(changes);
    }

    /** What changes: a cluster, a machine, or the MDM server (one, named "server"). */
    public enum Kind { CLUSTER, MACHINE, MDM }

    public enum Action { ADD, CHANGE, REMOVE }

    /** A field whose value differs; before is null for an added field, after null for a removed one. */
    public record FieldChange(String field, String before, String after) {
    }

    public record Change(Kind kind, Action action, String name, List<FieldChange> fields) {
        public Change {
            fields = List.copyOf(fields);
        }
    }

    public boolean isEmpty() {
        return changes.isEmpty();
    }

    public long count(Action action) {
        return changes.stream().filter(change -> change.action() == action).count();
    }

    /** "2 added, 1 changed, 0 removed" */
    public String appliedSummary() {
        return count(Action.ADD) + " added, " + count(Action.CHANGE) + " changed, " + count(Action.REMOVE) + " removed";
    }

    /** "2 to add, 1 to change, 0 to remove." */
    public String summary() {
        return count(Action.ADD) + " to add, " + count(Action.CHANGE) + " to change, " + count(Action.REMOVE) + " to remove.";
    }
}
