package io.macfleet.ssh;

/** Work done on one machine of a fleet run, e.g. gathering its facts. */
@FunctionalInterface
public interface MachineOperation<T> {
    T apply(MachineSession machine) throws Exception;
}
