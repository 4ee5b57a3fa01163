package io.macfleet.facts;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Reads {@code system_profiler SPThunderboltDataType -json}. Tolerant of field order, unknown fields and
 * entries it does not need (buses without a domain UUID, devices of any kind); strict about what the
 * cabling check relies on: a port number that is a number, a UUID that is text.
 */
public final class ThunderboltParser {
    public static final String COMMAND = "system_profiler SPThunderboltDataType -json";

    private ThunderboltParser() {
    }

    public static ThunderboltFacts parse(String output) {
        JsonNode root = CommandJson.read(COMMAND, output);
        if (root == null || !root.isObject()) {
            throw new FactsParseException(COMMAND, "expected a JSON object with key SPThunderboltDataType, got "
                    + (root == null ? "nothing" : root.getNodeType().toString().toLowerCase()));
        }
        JsonNode entries = root.get("SPThunderboltDataType");
        if (entries == null) {
            throw new FactsParseException(COMMAND, "missing key SPThunderboltDataType (is this the output of " + COMMAND + "?)");
        }
        if (!entries.isArray()) {
            throw new FactsParseException(COMMAND, "SPThunderboltDataType: expected a list of buses");
        }
        List<ThunderboltBus> buses = new ArrayList<>();
        for (int index = 0; index < entries.size(); index++) {
            buses.add(bus(entries.get(index), "SPThunderboltDataType[" + index + "]"));
        }
        return new ThunderboltFacts(buses);
    }

    private static ThunderboltBus bus(JsonNode entry, String path) {
        if (!entry.isObject()) {
            throw new FactsParseException(COMMAND, path + ": expected an object describing a bus");
        }
        String name = text(entry, "_name", path).orElse("");
        Optional<String> domain = text(entry, "domain_uuid_key", path);
        String hostName = text(entry, "device_name_key", path).orElse("");
        OptionalInt receptacle = OptionalInt.empty();
        Optional<LinkSpeed> speed = Optional.empty();
        boolean connected = false;
        JsonNode tag = entry.get("receptacle_1_tag");
        if (tag != null) {
            String tagPath = path + ".receptacle_1_tag";
            if (!tag.isObject()) {
                throw new FactsParseException(COMMAND, tagPath + ": expected an object");
            }
            Optional<String> id = text(tag, "receptacle_id_key", tagPath);
            if (id.isPresent()) {
                try {
                    receptacle = OptionalInt.of(Integer.parseInt(id.get().trim()));
                } catch (NumberFormatException e) {
                    throw new FactsParseException(COMMAND, tagPath + ".receptacle_id_key: expected a port number, got '" + id.get() + "'");
                }
            }
            Optional<String> speedText = text(tag, "current_speed_key", tagPath);
            if (speedText.isPresent()) {
                speed = LinkSpeed.parse(speedText.get());
                if (speed.isEmpty()) {
                    throw new FactsParseException(COMMAND, tagPath + ".current_speed_key: expected a speed like '80 Gb/s', got '" + speedText.get() + "'");
                }
            }
            connected = text(tag, "receptacle_status_key", tagPath).map("receptacle_connected"::equals).orElse(false);
        }
        List<ThunderboltDevice> devices = new ArrayList<>();
        collectDevices(entry.get("_items"), path + "._items", 0, devices);
        if (!connected && !devices.isEmpty()) {
            // Some captures omit receptacle_status_key; an attached device is proof enough.
            connected = true;
        }
        return new ThunderboltBus(name, hostName, domain, receptacle, speed, connected, devices);
    }

    private static void collectDevices(JsonNode items, String path, int depth, List<ThunderboltDevice> devices) {
        if (items == null) {
            return;
        }
        if (!items.isArray()) {
            throw new FactsParseException(COMMAND, path + ": expected a list of devices");
        }
        for (int index = 0; index < items.size(); index++) {
            JsonNode item = items.get(index);
            String itemPath = path + "[" + index + "]";
            if (!item.isObject()) {
                throw new FactsParseException(COMMAND, itemPath + ": expected an object describing a device");
            }
            devices.add(new ThunderboltDevice(
                    text(item, "_name", itemPath).orElse(""),
                    text(item, "device_name_key", itemPath).orElse(""),
                    text(item, "vendor_name_key", itemPath).orElse(""),
                    text(item, "domain_uuid_key", itemPath),
                    depth));
            collectDevices(item.get("_items"), itemPath + "._items", depth + 1, devices);
        }
    }

    private static Optional<String> text(JsonNode node, String field, String path) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isValueNode()) {
            throw new FactsParseException(COMMAND, path + "." + field + ": expected text, got " + value.getNodeType().toString().toLowerCase());
        }
        return Optional.of(value.asText());
    }
}
