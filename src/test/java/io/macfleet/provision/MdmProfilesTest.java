package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The profiles in mdm-profiles/: well-formed property lists as macOS reads them (a top-level Configuration with
 * identifiers and UUIDs, unique across every profile and payload), and the Energy Saver profile sets exactly what the
 * provision playbook's power-settings step sets with pmset, so the two cannot drift apart.
 */
class MdmProfilesTest {

    private static final Path PROFILES = Path.of("mdm-profiles");

    /** pmset's setting names and the Energy Saver payload's keys for the same setting (IOKitUser's IOPM keys). */
    private static final Map<String, String> PMSET_TO_PAYLOAD = Map.of(
            "sleep", "System Sleep Timer",
            "displaysleep", "Display Sleep Timer",
            "disksleep", "Disk Sleep Timer",
            "autorestart", "Automatic Restart On Power Loss",
            "womp", "Wake on LAN");

    /**
     * The PowerSettings keys of Apple's Energy Saver payload schema (apple/device-management at 0a4527c5ea21825fd23e08273ccdb9e2302458ce,
     * mdm/profiles/com.apple.MCX(EnergySaver).yaml). The schema spells {@code Wake on LAN}; macOS's power management reads
     * {@code Wake On LAN} (IOKitUser IOPMLibPrivate.h, kIOPMWakeOnLANKey) and the real profiles found spell it so: the
     * profile carries both with one value until a real Mac shows which spelling MCX applies.
     */
    private static final Set<String> SCHEMA_POWER_SETTINGS = Set.of("Display Sleep Timer", "Disk Sleep Timer", "System Sleep Timer",
            "Reduce Processor Speed", "Dynamic Power Step", "Wake on LAN", "Wake On Modem Ring", "Automatic Restart On Power Loss");
    private static final String IOKIT_WAKE_ON_LAN = "Wake On LAN";

    @Test
    void everyProfileIsAWellFormedConfigurationWithUniqueIdentifiers() throws Exception {
        List<Path> files;
        try (Stream<Path> list = Files.list(PROFILES)) {
            files = list.filter(file -> file.toString().endsWith(".mobileconfig")).sorted().toList();
        }
        assertThat(files).isNotEmpty();
        Set<String> identifiers = new HashSet<>();
        Set<UUID> uuids = new HashSet<>();
        for (Path file : files) {
            Map<String, Object> profile = plist(file);
            assertThat(profile).as(file.toString()).containsEntry("PayloadType", "Configuration").containsEntry("PayloadVersion", 1L)
                    .containsKeys("PayloadIdentifier", "PayloadUUID", "PayloadDisplayName", "PayloadContent");
            List<Map<String, Object>> payloads = new ArrayList<>();
            payloads.add(profile);
            for (Object content : (List<?>) profile.get("PayloadContent")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> payload = (Map<String, Object>) content;
                assertThat(payload).as(file + " payload").containsKeys("PayloadType", "PayloadIdentifier", "PayloadUUID", "PayloadVersion");
                payloads.add(payload);
            }
            for (Map<String, Object> payload : payloads) {
                assertThat(identifiers.add((String) payload.get("PayloadIdentifier"))).as("unique identifier " + payload.get("PayloadIdentifier")).isTrue();
                assertThat(uuids.add(UUID.fromString((String) payload.get("PayloadUUID")))).as("unique UUID in " + file).isTrue();
            }
        }
    }

    @Test
    void theEnergySaverProfileSetsWhatThePlaybookSetsWithPmset() throws Exception {
        Map<String, Object> profile = plist(PROFILES.resolve("energy-saver-headless.mobileconfig"));
        @SuppressWarnings("unchecked")
        Map<String, Object> payload = (Map<String, Object>) ((List<?>) profile.get("PayloadContent")).getFirst();
        assertThat(payload).containsEntry("PayloadType", "com.apple.MCX").containsEntry("SleepDisabled", true);
        @SuppressWarnings("unchecked")
        Map<String, Object> acPower = (Map<String, Object>) payload.get("com.apple.EnergySaver.desktop.ACPower");

        JsonNode playbook = new ObjectMapper(new YAMLFactory()).readTree(Path.of("playbooks", "provision.yaml").toFile());
        JsonNode step = null;
        for (JsonNode candidate : playbook.get("steps")) {
            if (candidate.get("name").asText().equals("power-settings")) {
                step = candidate;
            }
        }
        assertThat(step).as("the provision playbook's power-settings step").isNotNull();
        List<String> argv = new ArrayList<>();
        step.get("params").get("action").get(0).get("argv").forEach(argument -> argv.add(argument.asText()));
        assertThat(argv.subList(0, 2)).containsExactly("/usr/bin/pmset", "-a");
        Map<String, Long> fromPmset = new LinkedHashMap<>();
        for (int index = 2; index + 1 < argv.size(); index += 2) {
            assertThat(PMSET_TO_PAYLOAD).as("pmset setting " + argv.get(index) + " has an Energy Saver key").containsKey(argv.get(index));
            fromPmset.put(PMSET_TO_PAYLOAD.get(argv.get(index)), Long.parseLong(argv.get(index + 1)));
        }
        Map<String, Object> schemaKeys = new LinkedHashMap<>(acPower);
        Object iokitWakeOnLan = schemaKeys.remove(IOKIT_WAKE_ON_LAN);
        assertThat(schemaKeys).containsExactlyInAnyOrderEntriesOf(fromPmset);
        assertThat(SCHEMA_POWER_SETTINGS).containsAll(schemaKeys.keySet());
        assertThat(iokitWakeOnLan).as("the IOKit spelling carries the same value").isEqualTo(acPower.get("Wake on LAN"));
    }

    /** A property list as Java values: dict, array, string, integer (long), true/false. External entities are never loaded. */
    static Map<String, Object> plist(Path file) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        factory.setFeature("http://xml.org/sax/features/external-general-entities", false);
        factory.setExpandEntityReferences(false);
        Element root = factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
        assertThat(root.getTagName()).isEqualTo("plist");
        assertThat(root.getAttribute("version")).isEqualTo("1.0");
        @SuppressWarnings("unchecked")
        Map<String, Object> top = (Map<String, Object>) value(children(root).getFirst());
        return top;
    }

    private static List<Element> children(Element element) {
        List<Element> children = new ArrayList<>();
        for (Node node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element child) {
                children.add(child);
            }
        }
        return children;
    }

    private static Object value(Element element) throws IOException {
        return switch (element.getTagName()) {
            case "dict" -> {
                Map<String, Object> dict = new LinkedHashMap<>();
                List<Element> items = children(element);
                assertThat(items.size() % 2).as("a dict alternates key and value").isZero();
                for (int index = 0; index < items.size(); index += 2) {
                    assertThat(items.get(index).getTagName()).isEqualTo("key");
                    assertThat(dict.put(items.get(index).getTextContent(), value(items.get(index + 1))))
                            .as("duplicate key " + items.get(index).getTextContent()).isNull();
                }
                yield dict;
            }
            case "array" -> {
                List<Object> array = new ArrayList<>();
                for (Element item : children(element)) {
                    array.add(value(item));
                }
                yield array;
            }
            case "string" -> element.getTextContent();
            case "integer" -> Long.parseLong(element.getTextContent().strip());
            case "true" -> true;
            case "false" -> false;
            default -> throw new IOException("unexpected plist element <" + element.getTagName() + ">");
        };
    }
}
