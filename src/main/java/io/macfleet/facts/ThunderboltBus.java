package io.macfleet.facts;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One Thunderbolt/USB4 bus of a Mac as {@code system_profiler SPThunderboltDataType} reports it. On Apple
 * silicon each bus has exactly one receptacle (port), so a bus stands for a port.
 *
 * @param name {@code _name}, e.g. "thunderboltusb4_bus_0"
 * @param hostName {@code device_name_key} of the bus itself: the Mac's marketing name ("Mac Studio")
 * @param domainUuid {@code domain_uuid_key}: what a cabled peer Mac lists for this port
 * @param receptacle {@code receptacle_1_tag.receptacle_id_key}: the port number
 * @param speed {@code receptacle_1_tag.current_speed_key}
 * @param connected {@code receptacle_status_key} is {@code receptacle_connected}
 * @param devices everything attached, directly or behind hubs
 */
public record ThunderboltBus(String name, String hostName, Optional<String> domainUuid, OptionalInt receptacle,
                             Optional<LinkSpeed> speed, boolean connected, List<ThunderboltDevice> devices) {

    public ThunderboltBus {
        devices = List.copyOf(devices);
    }

    /** The Mac attached directly to this port, if any. */
    public Optional<ThunderboltDevice> directPeerHost() {
        return devices.stream().filter(device -> device.depth() == 0 && device.isHost()).findFirst();
    }

    /** Everything attached that is not a Mac directly on this port: drives, docks, hubs and what is behind them. */
    public List<ThunderboltDevice> otherDevices() {
        return devices.stream().filter(device -> !(device.depth() == 0 && device.isHost())).toList();
    }
}
