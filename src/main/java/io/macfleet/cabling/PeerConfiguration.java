package io.macfleet.cabling;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * For every pair of machines joined by a cable, which local interface, RDMA device and point-to-point
 * address reach the peer. The addresses follow the scheme {@code mlx.distributed_config} uses (one /30 per
 * cable out of 192.168.0.0/16, machines in rank order, each machine's ports in interface order), so a team
 * that also runs MLX's tools sees the same addresses.
 */
public record PeerConfiguration(List<String> machines, Map<String, String> managementAddresses, List<PeerLink> links) {

    public static final String NETMASK = "255.255.255.252";
    public static final int PREFIX_LENGTH = 30;

    /** One direction of a cable: from {@code machine} to {@code peer}. */
    public record PeerLink(String machine, String peer, int port, String networkInterface, String rdmaDevice,
                           String localAddress, String peerAddress) {
    }

    public PeerConfiguration {
        machines = List.copyOf(machines);
        managementAddresses = Map.copyOf(managementAddresses);
        links = List.copyOf(links);
    }

    public static PeerConfiguration from(CablingReport report, List<MachineCablingFacts> facts) {
        Map<String, MachineCablingFacts> byMachine = new LinkedHashMap<>();
        facts.forEach(machine -> byMachine.put(machine.machine(), machine));
        Map<String, String> management = new LinkedHashMap<>();
        for (String machine : report.machines()) {
            MachineCablingFacts machineFacts = byMachine.get(machine);
            if (machineFacts != null) {
                machineFacts.managementAddress().ifPresent(address -> management.put(machine, address));
            }
        }
        List<PeerLink> links = new ArrayList<>();
        List<ObservedLink> assigned = new ArrayList<>();
        int subnet = 0;
        for (String machine : report.machines()) {
            MachineCablingFacts machineFacts = byMachine.get(machine);
            if (machineFacts == null) {
                continue;
            }
            List<ObservedLink> own = report.links().stream()
                    .filter(link -> link.confirmed() && link.joinsMachine(machine))
                    .sorted(Comparator.comparing(link -> machineFacts.interfaceOf(link.endOf(machine).port()).orElse("")))
                    .toList();
            for (ObservedLink link : own) {
                if (assigned.contains(link)) {
                    continue;
                }
                assigned.add(link);
                String peer = link.otherEnd(machine).machine();
                MachineCablingFacts peerFacts = byMachine.get(peer);
                if (peerFacts == null) {
                    continue;
                }
                int third = subnet / 64;
                int fourth = (subnet % 64) * 4;
                if (third > 255) {
                    throw new IllegalStateException("ran out of point-to-point addresses in 192.168.0.0/16");
                }
                String local = "192.168." + third + "." + (fourth + 1);
                String remote = "192.168." + third + "." + (fourth + 2);
                subnet++;
                int localPort = link.endOf(machine).port();
                int peerPort = link.endOf(peer).port();
                String localInterface = machineFacts.interfaceOf(localPort).orElseThrow(() -> new IllegalStateException(
                        machine + ": networksetup lists no interface for Thunderbolt " + localPort));
                String peerInterface = peerFacts.interfaceOf(peerPort).orElseThrow(() -> new IllegalStateException(
                        peer + ": networksetup lists no interface for Thunderbolt " + peerPort));
                links.add(new PeerLink(machine, peer, localPort, localInterface, "rdma_" + localInterface, local, remote));
                links.add(new PeerLink(peer, machine, peerPort, peerInterface, "rdma_" + peerInterface, remote, local));
            }
        }
        return new PeerConfiguration(report.machines(), management, links);
    }

    /** The cables from {@code machine} to {@code peer}, in the order their addresses were assigned. */
    public List<PeerLink> between(String machine, String peer) {
        return links.stream().filter(link -> link.machine().equals(machine) && link.peer().equals(peer)).toList();
    }

    public Optional<String> managementAddress(String machine) {
        return Optional.ofNullable(managementAddresses.get(machine));
    }
}
