package io.macfleet.deployment;

/**
 * What a copy did: nothing (the file was already there with the same hash), a full copy, or a copy resumed from
 * a verified partial file; how many bytes went over the wire, and the SHA-256 the Mac confirmed.
 */
public record CopyOutcome(Kind kind, long size, long resumedFrom, long bytesSent, String sha256) {

    public enum Kind { ALREADY_PRESENT, COPIED, RESUMED }
}
