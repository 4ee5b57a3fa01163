package io.macfleet.facts;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@code networksetup -listallhardwareports}: hardware port names ("Thunderbolt 3", "Ethernet",
 * "Thunderbolt Bridge") mapped to BSD devices ("en4", "en0", "bridge0"). Thunderbolt port numbers must
 * always be mapped through this: the order is not the same on every model.
 */
public record HardwarePorts(Map<String, String> devicesByPort) {

    public HardwarePorts {
        devicesByPort = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(devicesByPort));
    }

    /** The network interface of Thunderbolt port (receptacle) {@code number}. */
    public Optional<String> thunderboltInterface(int number) {
        return Optional.ofNullable(devicesByPort.get("Thunderbolt " + number));
    }

    /** The Thunderbolt port number whose interface is {@code device}. */
    public Optional<Integer> thunderboltPortOf(String device) {
        return devicesByPort.entrySet().stream()
                .filter(entry -> entry.getValue().equals(device) && entry.getKey().matches("Thunderbolt [0-9]+"))
                .map(entry -> Integer.parseInt(entry.getKey().substring("Thunderbolt ".length())))
                .findFirst();
    }
}
