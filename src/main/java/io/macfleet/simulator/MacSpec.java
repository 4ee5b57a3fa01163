package io.macfleet.simulator;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;

/**
 * The fixed identity of one simulated Mac: what is printed on the box and in System Information.
 *
 * @param thunderbolt5 whether the ports are Thunderbolt 5 (RDMA over Thunderbolt needs it)
 */
public record MacSpec(String name, String modelIdentifier, String modelName, String chip, int performanceCores,
                      int efficiencyCores, int gpuCores, int memoryGb, String serialNumber, String hardwareUuid,
                      boolean thunderbolt5) {

    public static final int THUNDERBOLT_PORTS = 6;
    public static final String MAC_STUDIO_M3_ULTRA = "Mac15,14";

    public MacSpec {
        Objects.requireNonNull(name, "name");
        if (!name.matches("[A-Za-z0-9][A-Za-z0-9.-]*")) {
            throw new IllegalArgumentException("machine name '" + name + "' must be letters, digits, '.' and '-'");
        }
        if (memoryGb != 256 && memoryGb != 512 && memoryGb != 96) {
            throw new IllegalArgumentException("memory of " + name + " must be 96, 256 or 512 GB (M3 Ultra Mac Studio), got " + memoryGb);
        }
    }

    /**
     * A Mac Studio with M3 Ultra (32-core CPU: 24 performance + 8 efficiency, 80-core GPU). Serial number
     * and hardware UUID are derived from the name, so the same name is the same machine across restarts.
     */
    public static MacSpec macStudioM3Ultra(String name, int memoryGb) {
        UUID uuid = UUID.nameUUIDFromBytes(("macfleet-simulator/" + name).getBytes(StandardCharsets.UTF_8));
        String serial = serialFrom(uuid);
        return new MacSpec(name, MAC_STUDIO_M3_ULTRA, "Mac Studio", "Apple M3 Ultra", 24, 8, 80, memoryGb, serial,
                uuid.toString().toUpperCase(Locale.ROOT), true);
    }

    /** Apple serials are 10 characters of digits and upper-case consonant-heavy letters; this only needs to look right. */
    private static String serialFrom(UUID uuid) {
        String alphabet = "0123456789CDFGHJKLMNPQRTVWXY";
        long bits = uuid.getMostSignificantBits() ^ uuid.getLeastSignificantBits();
        StringBuilder serial = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            serial.append(alphabet.charAt((int) Long.remainderUnsigned(bits, alphabet.length())));
            bits = Long.divideUnsigned(bits, alphabet.length()) ^ (bits << 7);
        }
        return serial.toString();
    }

    public int cpuCores() {
        return performanceCores + efficiencyCores;
    }

    public long memoryBytes() {
        return (long) memoryGb * 1024 * 1024 * 1024;
    }

    /** Network interface of Thunderbolt port n on an M3 Ultra Mac Studio: Thunderbolt 1..6 are en2..en7. */
    public static String thunderboltInterface(int port) {
        return "en" + (port + 1);
    }

    /** The Thunderbolt domain UUID of one port's bus, stable for this machine. */
    public String domainUuid(int port) {
        return UUID.nameUUIDFromBytes((hardwareUuid + "/thunderbolt/" + port).getBytes(StandardCharsets.UTF_8))
                .toString().toUpperCase(Locale.ROOT);
    }

    /** Switch UID of the bus behind port n: Apple's 0x05AC prefix, the machine's bits, the bus number last. */
    public String switchUid(int port) {
        long machineBits = UUID.fromString(hardwareUuid).getMostSignificantBits() >>> 24;
        return String.format(Locale.ROOT, "0x05AC%010X1%X", machineBits & 0xFFFFFFFFFFL, port - 1);
    }

    /** A locally administered MAC address for an interface, stable for this machine. */
    public String macAddress(String interfaceName) {
        UUID bits = UUID.nameUUIDFromBytes((hardwareUuid + "/" + interfaceName).getBytes(StandardCharsets.UTF_8));
        long value = bits.getLeastSignificantBits();
        return String.format(Locale.ROOT, "%02x:%02x:%02x:%02x:%02x:%02x", ((value >>> 40) & 0xfc) | 0x02,
                (value >>> 32) & 0xff, (value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
    }
}
