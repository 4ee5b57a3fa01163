package io.macfleet.provision;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a run reports while it works, and how it asks a person for an operator step. Called from the machines'
 * threads: implementations must be thread-safe. Every method has a default, so a listener overrides what it shows.
 */
public interface ProvisioningListener {

    default void runStarted(long runId, boolean resumed, String playbook, List<String> machines) {
    }

    default void stepStarted(String machine, String step) {
    }

    /** A line about a step that takes time ("waiting for SSH after the reboot (12 s)"). */
    default void progress(String machine, String step, String line) {
    }

    default void stepFinished(String machine, String step, StepStatus status, String summary) {
    }

    /**
     * A person must do something on a machine. The answer may come much later; the run also notices a
     * confirmation made elsewhere (the console) meanwhile. The default defers: the step stays waiting-for-operator
     * and the machine stops there.
     */
    default CompletableFuture<OperatorAnswer> operatorNeeded(OperatorRequest request) {
        return CompletableFuture.completedFuture(OperatorAnswer.defer());
    }

    /** The verification after a confirmation: passed, or what is still wrong. */
    default void operatorVerified(OperatorRequest request, boolean verified, String detail) {
    }

    default void message(String text) {
    }

    /** A listener that shows nothing and defers every operator step. */
    ProvisioningListener SILENT = new ProvisioningListener() {
    };
}
