package io.macfleet.osupdate;

import io.macfleet.inventory.Machine;
import io.macfleet.mdm.OsUpdateTarget;

/**
 * One way of taking a Mac to an exact macOS version and build: {@code mdm} (declarations through the fleet's MDM
 * server) or {@code ssh} ({@code softwareupdate} / {@code startosinstall} with the volume owner's password on standard
 * input). An implementation is a CDI bean ({@code @ApplicationScoped}); the campaign picks it by {@link #name()}
 * ({@code --via mdm|ssh}). It acts on one machine at a time and holds no campaign state: the campaign stores, before
 * each call, which step it is about to take, and decides what to call after a crash.
 *
 * <p>The campaign calls, for every machine of a cluster: {@link #preflight} (all machines, before any change; one
 * blocking problem on any machine stops the cluster); then, after draining the cluster, {@link #start} once per
 * machine; then {@link #progress} repeatedly until every machine is {@link UpdateProgress.Phase#DONE} or one is
 * {@link UpdateProgress.Phase#FAILED} or a phase deadline passes. The target is the same record for every call of a
 * campaign (its {@code installBy} is fixed when the campaign is planned), so repeating a call sends the same thing.
 *
 * <p>No method throws for a machine-level problem (unreachable, refused, not enrolled): each answers it as a typed
 * finding, an {@link UpdateProgress.Phase#UNKNOWN} progress or a failed {@link StartResult}. Runtime exceptions are
 * kept for programming errors; the campaign records them as the machine's failure.
 */
public interface UpdateMethod {

    /** The name {@code --via} selects and the campaign stores: lower case, e.g. {@code mdm}, {@code ssh}. */
    String name();

    /**
     * Checks that {@code machine} can be taken to {@code target} by this method, <b>without changing anything</b> on
     * the machine or any server (read-only commands and requests only: no declaration, no set, no command, no
     * install). Every check that fails is one {@link PreflightFinding} with what is wrong and the fix a person must
     * make; the answer also carries the machine's current version and build when they could be read. Checks, where
     * they apply: reachable; enrolled (MDM) and bootstrap token escrowed, or volume-owner credentials given and the
     * account a volume owner (SSH); enough free disk; the target offered for this model; current version and build.
     * A machine already exactly on the target version and build passes with {@link PreflightResult#alreadyOnTarget()}.
     */
    PreflightResult preflight(Machine machine, OsUpdateTarget target);

    /**
     * Starts taking {@code machine} to {@code target} and returns what it sent, one {@link StartResult.Action} per
     * declaration, set assignment, command or remote program (the campaign audits each). Must be safe to call again
     * with the same arguments: the campaign records "starting" before the call and "started" after it, so a crash in
     * between makes it call {@code start} once more on resume. A second call must not send again what already reached
     * the machine or the server (MDM: the server answers "unchanged" to the same declaration and assignment, so no
     * device is synced twice; SSH: check first, with {@link #progress}, whether the install is already under way or
     * done, and then send nothing). A refusal (e.g. wrong volume-owner password) is a {@link StartResult} with
     * {@code failure} set, not an exception.
     */
    StartResult start(Machine machine, OsUpdateTarget target);

    /**
     * Where {@code machine} is on its way to {@code target}, read without changing anything. {@link
     * UpdateProgress.Phase#DONE} only when the machine reports exactly the target version and, when the target names
     * one, the target build (a different build is {@link UpdateProgress.Phase#FAILED} with the build it reported);
     * {@link UpdateProgress.Phase#FAILED} carries the reason the machine or server gave;
     * {@link UpdateProgress.Phase#UNKNOWN} when nothing could be read (unreachable, restarting, server down), with the
     * reason in {@code detail}. The campaign enforces the deadlines; this method never waits.
     */
    UpdateProgress progress(Machine machine, OsUpdateTarget target);
}
