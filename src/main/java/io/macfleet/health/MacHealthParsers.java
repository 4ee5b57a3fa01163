package io.macfleet.health;

import java.io.StringReader;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.InputSource;

/**
 * Parsers of the health commands' outputs, each checked against a real capture under
 * src/test/resources/macos-samples/ (SOURCES.md names where each came from). A parser throws
 * {@link IllegalArgumentException} with what it expected; the gatherer records that as the source being unreadable.
 */
public final class MacHealthParsers {

    private MacHealthParsers() {
    }

    /** What one powermetrics plist sample says: power in watts, die temperatures where an smc dictionary exists. */
    public record Power(double packageWatts, String thermalPressure, Double cpuDieCelsius, Double gpuDieCelsius) {
    }

    /**
     * {@code powermetrics --samplers cpu_power,gpu_power,thermal -i 1000 -n 1 -f plist}: the top-level dictionary's
     * {@code processor.combined_power} (milliwatts; CPU + GPU + ANE), {@code thermal_pressure}, and {@code smc.cpu_die} /
     * {@code smc.gpu_die} (degrees Celsius) when the smc sampler answered (Intel Macs). powermetrics ends each sample
     * with a NUL byte; the first sample is read.
     */
    public static Power powermetrics(String output) {
        String first = output.split("\0", -1)[0].strip();
        if (!first.startsWith("<?xml") && !first.startsWith("<plist")) {
            throw new IllegalArgumentException("expected a plist, got '" + abbreviate(first) + "'");
        }
        Map<String, Node> top = dictionary(root(first));
        Map<String, Node> processor = top.containsKey("processor") ? dictionary((Element) top.get("processor")) : Map.of();
        Double combined = number(processor.get("combined_power"));
        if (combined == null) {
            Double cpu = number(processor.get("cpu_power"));
            Double gpu = number(processor.get("gpu_power"));
            if (cpu == null || gpu == null) {
                throw new IllegalArgumentException("no processor.combined_power (nor cpu_power and gpu_power) in the plist");
            }
            combined = cpu + gpu + java.util.Optional.ofNullable(number(processor.get("ane_power"))).orElse(0.0);
        }
        Map<String, Node> smc = top.containsKey("smc") ? dictionary((Element) top.get("smc")) : Map.of();
        Node pressure = top.get("thermal_pressure");
        return new Power(combined / 1000.0, pressure == null ? null : pressure.getTextContent().strip(), number(smc.get("cpu_die")),
                number(smc.get("gpu_die")));
    }

    private static Element root(String xml) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            // The DOCTYPE names Apple's DTD by URL: never fetch it (nor anything else) while parsing a Mac's output.
            factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
            factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
            factory.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            factory.setExpandEntityReferences(false);
            DocumentBuilder builder = factory.newDocumentBuilder();
            builder.setErrorHandler(null);
            Element plist = builder.parse(new InputSource(new StringReader(xml))).getDocumentElement();
            for (Node child = plist.getFirstChild(); child != null; child = child.getNextSibling()) {
                if (child instanceof Element element && element.getTagName().equals("dict")) {
                    return element;
                }
            }
            throw new IllegalArgumentException("the plist has no top-level dict");
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalArgumentException("not a readable plist: " + e.getMessage(), e);
        }
    }

    /** A plist dict's entries: key text to the value element that follows it. */
    private static Map<String, Node> dictionary(Element dict) {
        Map<String, Node> entries = new HashMap<>();
        String key = null;
        for (Node child = dict.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (!(child instanceof Element element)) {
                continue;
            }
            if (element.getTagName().equals("key")) {
                key = element.getTextContent().strip();
            } else if (key != null) {
                entries.put(key, element);
                key = null;
            }
        }
        return entries;
    }

    private static Double number(Node value) {
        if (value instanceof Element element && (element.getTagName().equals("real") || element.getTagName().equals("integer"))) {
            return Double.parseDouble(element.getTextContent().strip());
        }
        return null;
    }

    /** What memory_pressure says: physical memory, wired pages as bytes, and the free percentage. */
    public record Memory(long physicalBytes, long wiredBytes, int freePercent) {
        public double pressureRatio() {
            return Math.clamp(1 - freePercent / 100.0, 0, 1);
        }
    }

    private static final Pattern SYSTEM = Pattern.compile("The system has (\\d+) \\((\\d+) pages with a page size of (\\d+)\\)");
    private static final Pattern WIRED = Pattern.compile("(?m)^Pages wired down:\\s*(\\d+)");
    private static final Pattern FREE = Pattern.compile("(?m)^System-wide memory free percentage:\\s*(\\d+)%");

    public static Memory memoryPressure(String output) {
        Matcher system = SYSTEM.matcher(output);
        Matcher wired = WIRED.matcher(output);
        Matcher free = FREE.matcher(output);
        if (!system.find() || !wired.find() || !free.find()) {
            throw new IllegalArgumentException("expected 'The system has N (P pages with a page size of S)', 'Pages wired down: N' and "
                    + "'System-wide memory free percentage: N%', got '" + abbreviate(output.strip()) + "'");
        }
        return new Memory(Long.parseLong(system.group(1)), Long.parseLong(wired.group(1)) * Long.parseLong(system.group(3)),
                Integer.parseInt(free.group(1)));
    }

    /**
     * The GPU's wired-memory limit in bytes from {@code sysctl -n iogpu.wired_limit_mb}. 0 means macOS' default, which
     * Apple does not document: the figure MLX and exo users measure is about 75% of memory above 36 GB and two thirds
     * below, so that is what is reported then (an estimate; set the sysctl to know it exactly).
     */
    public static long wiredLimitBytes(String output, long physicalBytes) {
        String value = output.strip();
        if (!value.matches("\\d+")) {
            throw new IllegalArgumentException("expected a number of megabytes, got '" + abbreviate(value) + "'");
        }
        long megabytes = Long.parseLong(value);
        if (megabytes > 0) {
            return megabytes * 1024 * 1024;
        }
        return physicalBytes > 36L * 1024 * 1024 * 1024 ? physicalBytes / 4 * 3 : physicalBytes / 3 * 2;
    }

    private static final Pattern BOOT_TIME = Pattern.compile("\\{\\s*sec\\s*=\\s*(\\d+),\\s*usec\\s*=\\s*(\\d+)\\s*}");

    /** {@code sysctl -n kern.boottime}: {@code { sec = 1232765114, usec = 823118 } Fri Jan 23 18:45:14 2009}. */
    public static Instant bootTime(String output) {
        Matcher matcher = BOOT_TIME.matcher(output);
        if (!matcher.find()) {
            throw new IllegalArgumentException("expected '{ sec = N, usec = N }', got '" + abbreviate(output.strip()) + "'");
        }
        return Instant.ofEpochSecond(Long.parseLong(matcher.group(1)), Long.parseLong(matcher.group(2)) * 1000);
    }

    /** The kernel panic reports among a listing of /Library/Logs/DiagnosticReports (one name per line). */
    public static List<String> panicReports(String listing) {
        return listing.lines().map(String::strip).map(line -> line.substring(line.lastIndexOf('/') + 1))
                .filter(name -> name.endsWith(".panic")).sorted().toList();
    }

    private static final Pattern HCA = Pattern.compile("^hca_id:\\s*(\\S+)");
    private static final Pattern PORT = Pattern.compile("^port:\\s*(\\d+)");
    private static final Pattern STATE = Pattern.compile("^state:\\s*(PORT_\\w+)");

    /**
     * Every port of every device in {@code ibv_devinfo}'s output (rdma-core's layout: {@code hca_id:}, then per port
     * {@code port: N} and {@code state: PORT_ACTIVE (4)}). No devices (RDMA off: exit 255, nothing on standard output)
     * gives no ports.
     */
    public static List<MacHealth.RdmaPort> rdmaPorts(String output) {
        List<MacHealth.RdmaPort> ports = new ArrayList<>();
        String device = null;
        int port = 0;
        for (String raw : output.split("\\R")) {
            String line = raw.strip();
            Matcher matcher;
            if ((matcher = HCA.matcher(line)).find()) {
                device = matcher.group(1);
                port = 0;
            } else if ((matcher = PORT.matcher(line)).find()) {
                port = Integer.parseInt(matcher.group(1));
            } else if ((matcher = STATE.matcher(line)).find()) {
                if (device == null) {
                    throw new IllegalArgumentException("a port state before any hca_id line");
                }
                ports.add(new MacHealth.RdmaPort(device, port == 0 ? 1 : port, matcher.group(1)));
            }
        }
        return ports;
    }

    private static String abbreviate(String text) {
        String line = text.replace('\n', ' ');
        return line.length() > 120 ? line.substring(0, 117) + "..." : line;
    }
}
