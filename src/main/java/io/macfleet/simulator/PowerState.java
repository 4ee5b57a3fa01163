package io.macfleet.simulator;

/** Power state of a simulated Mac, as an operator standing next to it would describe it. */
public enum PowerState {
    ON, REBOOTING, RECOVERY, OFF
}
