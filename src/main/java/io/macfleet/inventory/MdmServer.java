package io.macfleet.inventory;

import io.macfleet.secrets.SecretReference;

/** The MDM server the fleet is enrolled in; apiToken is a reference, or null. */
public record MdmServer(String url, SecretReference apiToken) {
}
