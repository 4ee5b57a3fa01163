package io.macfleet.facts;

import java.util.List;

/**
 * One interface of {@code ifconfig}.
 *
 * @param name BSD name, e.g. en0, en5, bridge0
 * @param flags the flags between angle brackets (UP, RUNNING, ...)
 * @param macAddress the {@code ether} line, or null
 * @param ipv4 IPv4 addresses with prefix length, e.g. 192.168.50.11/24
 * @param ipv6 IPv6 addresses with prefix length (scope suffix kept)
 * @param status the {@code status:} line (active, inactive), or null when the interface has none
 */
public record NetworkInterface(String name, List<String> flags, String macAddress, List<String> ipv4, List<String> ipv6,
                               String status) {

    public NetworkInterface {
        flags = List.copyOf(flags);
        ipv4 = List.copyOf(ipv4);
        ipv6 = List.copyOf(ipv6);
    }

    public boolean up() {
        return flags.contains("UP");
    }
}
