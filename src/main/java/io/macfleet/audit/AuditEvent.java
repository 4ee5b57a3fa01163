package io.macfleet.audit;

import java.time.Instant;
import java.util.Objects;

/**
 * One entry of the append-only audit log: who did what, to which machine (if any), and how it ended.
 *
 * @param at when it happened
 * @param actor the person or component acting ("alice", "cli:root", "service", "provision")
 * @param machine the machine acted on, or null for fleet-wide actions such as an inventory apply
 * @param action a short dotted verb: "inventory.apply", "ssh.exec", "mdm.command", "manual-step.confirm"
 * @param detail what exactly (the command run, the plan applied); never a secret, never full output
 * @param outcome how it ended
 */
public record AuditEvent(Instant at, String actor, String machine, String action, String detail, Outcome outcome) {

    public enum Outcome { SUCCESS, FAILURE }

    public AuditEvent {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(outcome, "outcome");
        detail = detail == null ? "" : detail;
    }
}
