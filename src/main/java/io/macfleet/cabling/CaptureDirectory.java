package io.macfleet.cabling;

import io.macfleet.facts.FactsParseException;
import io.macfleet.facts.HardwarePortsParser;
import io.macfleet.facts.SimpleOutputParsers;
import io.macfleet.facts.ThunderboltParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Offline mode: command output captured by hand on each Mac, one subdirectory per machine named after it.
 * <pre>
 * DIR/studio-01/SPThunderboltDataType.json   system_profiler SPThunderboltDataType -json   (required)
 * DIR/studio-01/hardware-ports.txt           networksetup -listallhardwareports            (required)
 * DIR/studio-01/rdma_ctl-status.txt          rdma_ctl status
 * DIR/studio-01/sw_vers.txt                  sw_vers
 * DIR/studio-01/ibv_devices.txt              ibv_devices                                   (optional)
 * DIR/studio-01/ibv_devinfo.txt              ibv_devinfo                                   (optional)
 * DIR/studio-01/ifconfig.txt                 ifconfig                                      (optional)
 * DIR/studio-01/address.txt                  the machine's management (Ethernet) address   (optional)
 * </pre>
 */
public final class CaptureDirectory {
    public static final String THUNDERBOLT = "SPThunderboltDataType.json";
    public static final String HARDWARE_PORTS = "hardware-ports.txt";
    public static final String RDMA_STATUS = "rdma_ctl-status.txt";
    public static final String SOFTWARE_VERSION = "sw_vers.txt";
    public static final String RDMA_DEVICES = "ibv_devices.txt";
    public static final String RDMA_PORTS = "ibv_devinfo.txt";
    public static final String IFCONFIG = "ifconfig.txt";
    public static final String ADDRESS = "address.txt";

    private CaptureDirectory() {
    }

    /** A capture that cannot be used; the message names the file and what is wrong. */
    public static final class CaptureException extends RuntimeException implements io.macfleet.command.CommandFailure {
        @Override
        public Kind failureKind() {
            return Kind.USAGE;
        }

        public CaptureException(String message) {
            super(message);
        }
    }

    /** Reads every machine's captures; all problems of all machines are reported together. */
    public static List<MachineCablingFacts> read(Path directory) {
        if (!Files.isDirectory(directory)) {
            throw new CaptureException(directory + ": not a directory (expected one subdirectory per machine with its captured command output)");
        }
        List<Path> machines;
        try (Stream<Path> entries = Files.list(directory)) {
            machines = entries.filter(Files::isDirectory).sorted().toList();
        } catch (IOException e) {
            throw new CaptureException(directory + ": cannot list (" + e.getMessage() + ")");
        }
        if (machines.isEmpty()) {
            throw new CaptureException(directory + ": no machine subdirectories (expected e.g. " + directory.resolve("studio-01").resolve(THUNDERBOLT) + ")");
        }
        List<MachineCablingFacts> facts = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Path machine : machines) {
            try {
                facts.add(readMachine(machine));
            } catch (CaptureException | FactsParseException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new CaptureException(String.join("\n", problems));
        }
        return facts;
    }

    public static MachineCablingFacts readMachine(Path machine) {
        String name = machine.getFileName().toString();
        return new MachineCablingFacts(name,
                optional(machine, ADDRESS).map(String::strip).filter(text -> !text.isEmpty()),
                parse(machine, THUNDERBOLT, ThunderboltParser::parse, true).orElseThrow(),
                parse(machine, HARDWARE_PORTS, HardwarePortsParser::parse, true).orElseThrow(),
                parse(machine, RDMA_STATUS, SimpleOutputParsers::rdmaEnabled, false),
                parse(machine, RDMA_DEVICES, SimpleOutputParsers::rdmaDevices, false),
                parse(machine, SOFTWARE_VERSION, output -> SimpleOutputParsers.softwareVersion(output).productVersion(), false),
                parse(machine, IFCONFIG, SimpleOutputParsers::bridgeActive, false),
                parse(machine, RDMA_PORTS, SimpleOutputParsers::rdmaPortStates, false));
    }

    private static <T> Optional<T> parse(Path machine, String file, java.util.function.Function<String, T> parser, boolean required) {
        Optional<String> content = optional(machine, file);
        if (content.isEmpty()) {
            if (required) {
                throw new CaptureException(machine.resolve(file) + ": missing (required for the cabling check)");
            }
            return Optional.empty();
        }
        try {
            return Optional.of(parser.apply(content.get()));
        } catch (FactsParseException e) {
            throw new CaptureException(machine.resolve(file) + ": " + e.getMessage());
        }
    }

    private static Optional<String> optional(Path machine, String file) {
        Path path = machine.resolve(file);
        if (!Files.exists(path)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Files.readString(path, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new CaptureException(path + ": cannot read (" + e.getMessage() + ")");
        }
    }
}
