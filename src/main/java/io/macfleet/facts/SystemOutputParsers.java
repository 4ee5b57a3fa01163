package io.macfleet.facts;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parsers for {@code uptime}, {@code df -k /} and the addresses of {@code ifconfig}. */
public final class SystemOutputParsers {

    public static final String UPTIME = "uptime";
    public static final String DISK_FREE = "df -k /";
    public static final String IFCONFIG = "ifconfig";

    private static final Pattern UP_SINCE = Pattern.compile("\\bup\\s+(.*?),\\s+(?:\\d+\\s+users?|load averages?)");
    private static final Pattern DAYS = Pattern.compile("^(\\d+)\\s+days?$");
    private static final Pattern HOURS_MINUTES = Pattern.compile("^(\\d+):(\\d{2})$");
    private static final Pattern UNIT = Pattern.compile("^(\\d+)\\s+(mins?|hrs?|secs?)$");
    private static final Pattern SIZE = Pattern.compile("^([0-9]+(?:\\.[0-9]+)?)([BKMGTP]?)i?$");
    private static final Pattern INTERFACE_HEADER = Pattern.compile("^([A-Za-z0-9_.-]+): flags=[0-9a-fA-F]+<([^>]*)>.*");
    private static final Pattern INET = Pattern.compile("^inet (\\d{1,3}(?:\\.\\d{1,3}){3}) netmask 0x([0-9a-fA-F]{8}).*");
    private static final Pattern INET6 = Pattern.compile("^inet6 (\\S+) prefixlen (\\d+).*");

    private SystemOutputParsers() {
    }

    /**
     * {@code uptime}: "23:46  up  9:53, 2 users, load averages: ..." and its variants ("up 3 days,  2:03",
     * "up 5 mins", "up 1 day, 12 mins", "up 40 secs").
     */
    public static Duration uptime(String output) {
        String line = output.strip();
        Matcher matcher = UP_SINCE.matcher(line);
        if (!matcher.find()) {
            throw new FactsParseException(UPTIME, "expected 'up ..., N users, load averages: ...', got '" + abbreviate(line) + "'");
        }
        Duration total = Duration.ZERO;
        for (String part : matcher.group(1).split(",")) {
            String piece = part.strip();
            Matcher days = DAYS.matcher(piece);
            Matcher hoursMinutes = HOURS_MINUTES.matcher(piece);
            Matcher unit = UNIT.matcher(piece);
            if (days.matches()) {
                total = total.plusDays(Long.parseLong(days.group(1)));
            } else if (hoursMinutes.matches()) {
                total = total.plusHours(Long.parseLong(hoursMinutes.group(1))).plusMinutes(Long.parseLong(hoursMinutes.group(2)));
            } else if (unit.matches()) {
                long amount = Long.parseLong(unit.group(1));
                total = switch (unit.group(2).charAt(0)) {
                    case 'm' -> total.plusMinutes(amount);
                    case 'h' -> total.plusHours(amount);
                    default -> total.plusSeconds(amount);
                };
            } else {
                throw new FactsParseException(UPTIME, "cannot read '" + piece + "' in the time since boot of '" + abbreviate(line) + "'");
            }
        }
        return total;
    }

    /**
     * Free bytes of the root file system from {@code df -k /}: the "Avail"/"Available" column of the line
     * mounted on "/". Plain numbers are 1024-byte blocks; values with a unit ("1.6Ti", as {@code -h} prints)
     * are read as such.
     */
    public static long freeDiskBytes(String output) {
        List<String> lines = output.lines().filter(line -> !line.isBlank()).toList();
        if (lines.isEmpty() || !lines.getFirst().startsWith("Filesystem")) {
            throw new FactsParseException(DISK_FREE, "expected a 'Filesystem ...' header line, got '"
                    + abbreviate(lines.isEmpty() ? "" : lines.getFirst()) + "'");
        }
        List<String> header = Arrays.asList(lines.getFirst().strip().split("\\s+"));
        int column = header.indexOf("Avail");
        if (column < 0) {
            column = header.indexOf("Available");
        }
        if (column < 0) {
            throw new FactsParseException(DISK_FREE, "line 1: no Avail column in '" + abbreviate(lines.getFirst()) + "'");
        }
        for (int index = 1; index < lines.size(); index++) {
            String[] fields = lines.get(index).strip().split("\\s+");
            if (fields.length > column && fields[fields.length - 1].equals("/")) {
                return size(fields[column], index + 1);
            }
        }
        throw new FactsParseException(DISK_FREE, "no line for the file system mounted on /");
    }

    private static long size(String text, int line) {
        Matcher matcher = SIZE.matcher(text);
        if (!matcher.matches()) {
            throw new FactsParseException(DISK_FREE, "line " + line + ": '" + text + "' is not a size");
        }
        double number = Double.parseDouble(matcher.group(1));
        int power = switch (matcher.group(2)) {
            case "" -> -1;
            case "B" -> 0;
            case "K" -> 1;
            case "M" -> 2;
            case "G" -> 3;
            case "T" -> 4;
            default -> 5;
        };
        // A bare number is a count of 1024-byte blocks (df -k).
        return power < 0 ? (long) number * 1024 : (long) (number * Math.pow(1024, power));
    }

    /** Every interface of {@code ifconfig} with its flags, MAC address, addresses and status. */
    public static List<NetworkInterface> interfaces(String output) {
        List<NetworkInterface> interfaces = new ArrayList<>();
        String name = null;
        List<String> flags = List.of();
        String mac = null;
        String status = null;
        List<String> ipv4 = new ArrayList<>();
        List<String> ipv6 = new ArrayList<>();
        String[] lines = output.split("\\R");
        for (int index = 0; index < lines.length; index++) {
            String line = lines[index];
            if (line.isBlank()) {
                continue;
            }
            if (!Character.isWhitespace(line.charAt(0))) {
                Matcher header = INTERFACE_HEADER.matcher(line);
                if (!header.matches()) {
                    throw new FactsParseException(IFCONFIG, "line " + (index + 1) + ": expected 'NAME: flags=...<...> mtu N', got '" + abbreviate(line) + "'");
                }
                if (name != null) {
                    interfaces.add(new NetworkInterface(name, flags, mac, ipv4, ipv6, status));
                }
                name = header.group(1);
                flags = header.group(2).isEmpty() ? List.of() : List.of(header.group(2).split(","));
                mac = null;
                status = null;
                ipv4 = new ArrayList<>();
                ipv6 = new ArrayList<>();
                continue;
            }
            if (name == null) {
                throw new FactsParseException(IFCONFIG, "line " + (index + 1) + ": indented line before any interface");
            }
            String detail = line.strip();
            Matcher inet = INET.matcher(detail);
            Matcher inet6 = INET6.matcher(detail);
            if (detail.startsWith("ether ")) {
                mac = detail.substring("ether ".length()).strip().toLowerCase(Locale.ROOT);
            } else if (inet.matches()) {
                ipv4.add(inet.group(1) + "/" + Long.bitCount(Long.parseLong(inet.group(2), 16)));
            } else if (detail.startsWith("inet ")) {
                throw new FactsParseException(IFCONFIG, "line " + (index + 1) + ": expected 'inet A.B.C.D netmask 0xMASK', got '" + abbreviate(detail) + "'");
            } else if (inet6.matches()) {
                ipv6.add(inet6.group(1) + "/" + inet6.group(2));
            } else if (detail.startsWith("status:")) {
                status = detail.substring("status:".length()).strip();
            }
        }
        if (name != null) {
            interfaces.add(new NetworkInterface(name, flags, mac, ipv4, ipv6, status));
        }
        if (interfaces.isEmpty()) {
            throw new FactsParseException(IFCONFIG, "no interfaces in the output");
        }
        return interfaces;
    }

    private static String abbreviate(String text) {
        String firstLine = text.lines().findFirst().orElse("");
        return firstLine.length() > 80 ? firstLine.substring(0, 80) + "..." : firstLine;
    }
}
