package io.macfleet.inventory;

import io.macfleet.secrets.SecretReference;

/** The volume owner account of an Apple silicon Mac (needed to authorize updates); password is a reference. */
public record VolumeOwner(String user, SecretReference password) {
}
