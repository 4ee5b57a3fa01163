package io.macfleet.facts;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code system_profiler -json SPHardwareDataType}.
 */
public final class HardwareParser {
    public static final String COMMAND = "system_profiler -json SPHardwareDataType";
    private static final Pattern PROCESSORS = Pattern.compile("proc (\\d+)(?::(\\d+))?(?::(\\d+))?.*");
    private static final Pattern MEMORY = Pattern.compile("(\\d+(?:\\.\\d+)?) (MB|GB|TB)");

    private HardwareParser() {
    }

    public static HardwareOverview parse(String output) {
        JsonNode root = CommandJson.read(COMMAND, output);
        JsonNode entries = root == null ? null : root.get("SPHardwareDataType");
        if (entries == null || !entries.isArray() || entries.isEmpty() || !entries.get(0).isObject()) {
            throw new FactsParseException(COMMAND, "expected SPHardwareDataType with one hardware overview object");
        }
        JsonNode overview = entries.get(0);
        String processors = required(overview, "number_processors");
        Matcher cores = PROCESSORS.matcher(processors);
        if (!cores.matches()) {
            throw new FactsParseException(COMMAND, "SPHardwareDataType[0].number_processors: expected 'proc TOTAL:PERFORMANCE:EFFICIENCY', got '" + processors + "'");
        }
        String memory = required(overview, "physical_memory");
        Matcher size = MEMORY.matcher(memory);
        if (!size.matches()) {
            throw new FactsParseException(COMMAND, "SPHardwareDataType[0].physical_memory: expected a size like '512 GB', got '" + memory + "'");
        }
        long unit = switch (size.group(2)) {
            case "MB" -> 1L << 20;
            case "GB" -> 1L << 30;
            default -> 1L << 40;
        };
        return new HardwareOverview(
                required(overview, "machine_model"),
                overview.path("machine_name").asText(""),
                overview.has("chip_type") ? overview.get("chip_type").asText() : overview.path("cpu_type").asText(""),
                Integer.parseInt(cores.group(1)),
                cores.group(2) == null ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(cores.group(2))),
                cores.group(3) == null ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(cores.group(3))),
                (long) (Double.parseDouble(size.group(1)) * unit),
                required(overview, "serial_number"),
                required(overview, "platform_UUID"));
    }

    public static final String DISPLAYS_COMMAND = "system_profiler -json SPDisplaysDataType";

    /**
     * GPU cores from {@code system_profiler -json SPDisplaysDataType}: the {@code sppci_cores} of the GPU entries
     * ({@code sppci_device_type} {@code spdisplays_gpu}; Apple silicon has one). Displays attached or not, the
     * GPU entry is there.
     */
    public static int gpuCores(String output) {
        JsonNode root = CommandJson.read(DISPLAYS_COMMAND, output);
        JsonNode entries = root == null ? null : root.get("SPDisplaysDataType");
        if (entries == null || !entries.isArray()) {
            throw new FactsParseException(DISPLAYS_COMMAND, "expected SPDisplaysDataType with a list of graphics entries");
        }
        int cores = 0;
        for (int index = 0; index < entries.size(); index++) {
            JsonNode entry = entries.get(index);
            if (!"spdisplays_gpu".equals(entry.path("sppci_device_type").asText()) || !entry.has("sppci_cores")) {
                continue;
            }
            String text = entry.get("sppci_cores").asText();
            try {
                cores += Integer.parseInt(text.strip());
            } catch (NumberFormatException e) {
                throw new FactsParseException(DISPLAYS_COMMAND, "SPDisplaysDataType[" + index + "].sppci_cores: expected a number, got '" + text + "'");
            }
        }
        if (cores == 0) {
            throw new FactsParseException(DISPLAYS_COMMAND, "no GPU entry with sppci_cores (expected on Apple silicon)");
        }
        return cores;
    }

    private static String required(JsonNode overview, String field) {
        JsonNode value = overview.get(field);
        if (value == null || !value.isValueNode() || value.asText().isBlank()) {
            throw new FactsParseException(COMMAND, "SPHardwareDataType[0]." + field + ": missing");
        }
        return value.asText();
    }
}
