package io.macfleet.node.cluster;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The cluster file's addresses of every rank, resolved once ({@link ClusterFile#addressesOf}): where a rank listens
 * and from where its peers are accepted. A wildcard address is refused: a rank listens on its own addresses only.
 */
record ClusterAddresses(List<Set<InetAddress>> byRank) {
    static ClusterAddresses resolve(ClusterFile cluster) {
        List<Set<InetAddress>> byRank = new ArrayList<>();
        for (int rank = 0; rank < cluster.size(); rank++) {
            Set<InetAddress> resolved = new LinkedHashSet<>();
            for (String address : cluster.addressesOf(rank)) {
                resolved.add(resolve(address, rank));
            }
            byRank.add(Set.copyOf(resolved));
        }
        return new ClusterAddresses(List.copyOf(byRank));
    }

    static InetAddress resolve(String address, int rank) {
        InetAddress resolved;
        try {
            resolved = InetAddress.getByName(address);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("rank " + rank + "'s address " + address + " in the cluster file does not resolve");
        }
        if (resolved.isAnyLocalAddress()) {
            throw new IllegalArgumentException("rank " + rank + "'s address in the cluster file is the wildcard " + address
                    + ": name the machine's own address (a rank listens on its own addresses only)");
        }
        return resolved;
    }

    Set<InetAddress> of(int rank) {
        return byRank.get(rank);
    }

    boolean allowed(int rank, InetAddress address) {
        return rank >= 0 && rank < byRank.size() && byRank.get(rank).contains(address);
    }

    /** True when every address is a loopback one: all ranks on this host, nothing crosses a network. */
    boolean loopbackOnly() {
        return byRank.stream().flatMap(Set::stream).allMatch(InetAddress::isLoopbackAddress);
    }

    /** The addresses that are not loopback ones, for a message. */
    List<String> networkAddresses() {
        return byRank.stream().flatMap(Set::stream).filter(address -> !address.isLoopbackAddress())
                .map(InetAddress::getHostAddress).distinct().toList();
    }
}
