package io.macfleet.facts;

import java.util.Optional;

/**
 * Something attached to a Thunderbolt bus: another Mac (it has a domain UUID) or a drive, dock or hub
 * (it has none). Devices behind a hub or dock are listed too, with a depth greater than zero.
 *
 * @param name the entry's {@code _name} ("Mac Studio", "LaCie Rugged", ...)
 * @param deviceName {@code device_name_key}: a Mac's model identifier ("Mac15,14"), a product name otherwise
 * @param vendorName {@code vendor_name_key}, or empty
 * @param domainUuid {@code domain_uuid_key}: present only for a host (a Mac)
 * @param depth 0 for a device attached directly to the port, 1 behind one hub, ...
 */
public record ThunderboltDevice(String name, String deviceName, String vendorName, Optional<String> domainUuid, int depth) {

    public boolean isHost() {
        return domainUuid.isPresent();
    }

    public String describe() {
        String what = deviceName.isEmpty() || deviceName.equals(name) ? name : name + " (" + deviceName + ")";
        return depth == 0 ? what : what + " behind a hub";
    }
}
