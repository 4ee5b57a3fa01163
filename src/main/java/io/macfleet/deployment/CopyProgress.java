package io.macfleet.deployment;

/** Told how far a copy is: bytes of the file present on the Mac (resumed bytes included) out of its size. */
@FunctionalInterface
public interface CopyProgress {

    CopyProgress NONE = (done, total) -> {
    };

    void transferred(long done, long total);
}
