package io.macfleet.reach;

import io.macfleet.inventory.Machine;
import io.macfleet.ssh.SshTarget;

/**
 * The ways to reach one machine of the applied inventory, built in one place ({@link #of}) for every feature that
 * talks to machines: facts, provisioning, cabling. Today that is SSH; an MDM channel (the inventory's MDM server
 * and the machine's {@code mdm.enrollmentId}) is the next way, added here as another component so that callers
 * choose a way instead of rebuilding one from inventory fields.
 *
 * @param machine the machine's name in the inventory
 * @param ssh how to reach it over SSH, with the settings the inventory loader resolved (defaults and groups merged)
 */
public record MachineReach(String machine, SshTarget ssh) {

    /**
     * @throws IllegalArgumentException when the inventory entry cannot make a connection (e.g. a malformed pinned
     *         host key), naming the machine and the field
     */
    public static MachineReach of(Machine machine) {
        return new MachineReach(machine.name(), new SshTarget(machine.name(), machine.address(), machine.ssh().port(), machine.ssh().user(),
                machine.ssh().privateKey(), machine.ssh().passphrase(), machine.ssh().hostKey()));
    }
}
