package io.macfleet.mdm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The declaration templates in mdm-profiles/declarations/ and what {@link DeclarativeOsUpdates} builds: the same
 * declarations, and every key valid for macOS by the field lists of apple/device-management
 * (src/test/resources/device-management/declaration-fields.json).
 */
class DeclarationTemplatesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path TEMPLATES = Path.of("mdm-profiles/declarations");
    private static final Path FIELDS = Path.of("src/test/resources/device-management/declaration-fields.json");

    private static List<JsonNode> templates() throws Exception {
        List<JsonNode> list = new ArrayList<>();
        try (Stream<Path> files = Files.list(TEMPLATES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
                list.add(JSON.readTree(file.toFile()));
            }
        }
        return list;
    }

    @Test
    void everyTemplateKeyIsOneAppleDefinesForMacosWithTheRightTypeAndValue() throws Exception {
        JsonNode apple = JSON.readTree(FIELDS.toFile()).path("declarations");
        List<JsonNode> templates = templates();
        assertThat(templates).extracting(t -> t.path("Type").asText()).containsExactlyInAnyOrder(
                "com.apple.configuration.softwareupdate.settings", "com.apple.configuration.management.status-subscriptions",
                "com.apple.configuration.softwareupdate.enforcement.specific", "com.apple.activation.simple");
        for (JsonNode template : templates) {
            String type = template.path("Type").asText();
            JsonNode fields = apple.path(type);
            assertThat(fields.isObject()).as(type + " is in Apple's lists").isTrue();
            assertThat(fields.path("macOS").asText()).as(type + " exists on macOS").isNotEqualTo("n/a");
            List<String> problems = new ArrayList<>();
            check(type, template.path("Payload"), fields.path("payloadkeys"), problems);
            assertThat(problems).as(type).isEmpty();
        }
    }

    @Test
    void theCheckRejectsWhatAppleDoesNotAllow() throws Exception {
        JsonNode settings = JSON.readTree(FIELDS.toFile()).path("declarations").path("com.apple.configuration.softwareupdate.settings");
        List<String> problems = new ArrayList<>();
        check("settings", JSON.readTree("""
                {"AutomaticActions": {"InstallOSUpdates": "Never"}, "Deferrals": {"CombinedPeriodInDays": 5, "MajorPeriodInDays": 120},
                 "RecommendedCadence": "Newest", "Colour": "blue"}"""), settings.path("payloadkeys"), problems);
        assertThat(problems).containsExactlyInAnyOrder(
                "settings: AutomaticActions.InstallOSUpdates 'Never' is not one of [\"Allowed\",\"AlwaysOn\",\"AlwaysOff\"]",
                "settings: Deferrals.CombinedPeriodInDays is not available on macOS",
                "settings: Deferrals.MajorPeriodInDays 120 is outside 1-90",
                "settings: RecommendedCadence is not available on macOS",
                "settings: Colour is not a key Apple defines");
        JsonNode enforcement = JSON.readTree(FIELDS.toFile()).path("declarations").path("com.apple.configuration.softwareupdate.enforcement.specific");
        problems.clear();
        check("enforcement", JSON.readTree("{\"TargetOSVersion\": 26.2}"), enforcement.path("payloadkeys"), problems);
        assertThat(problems).containsExactlyInAnyOrder("enforcement: TargetOSVersion must be a string", "enforcement: TargetLocalDateTime is required");
    }

    @Test
    void theTemplatesAreExactlyWhatMacfleetSends() throws Exception {
        OsUpdateTarget example = new OsUpdateTarget("26.2", Optional.of("25C56"), LocalDateTime.parse("2026-12-01T02:00:00"));
        Map<String, JsonNode> built = new HashMap<>();
        for (Declaration declaration : DeclarativeOsUpdates.declarations("CLUSTER", example)) {
            var node = JSON.createObjectNode();
            node.put("Type", declaration.type());
            node.put("Identifier", declaration.identifier());
            node.set("Payload", declaration.payload());
            built.put(declaration.type(), node);
        }
        for (JsonNode template : templates()) {
            assertThat(built.get(template.path("Type").asText())).as(template.path("Type").asText()).isEqualTo(template);
        }
        assertThat(built).hasSize(templates().size());
    }

    @Test
    void theSubscriptionsAreStatusItemsAppleDefinesForMacos() throws Exception {
        JsonNode items = JSON.readTree(FIELDS.toFile()).path("status-items");
        JsonNode subscriptions = templates().stream()
                .filter(t -> t.path("Type").asText().equals("com.apple.configuration.management.status-subscriptions")).findFirst().orElseThrow();
        List<String> names = new ArrayList<>();
        subscriptions.path("Payload").path("StatusItems").forEach(item -> names.add(item.path("Name").asText()));
        assertThat(names).containsExactlyElementsOf(DeclarativeOsUpdates.STATUS_ITEMS);
        for (String name : names) {
            assertThat(items.path(name).path("macOS").asText()).as(name).isNotEmpty().isNotEqualTo("n/a");
        }
        JsonNode installState = items.path("softwareupdate.install-state").path("value").get(0);
        assertThat(installState.path("rangelist")).extracting(JsonNode::asText)
                .containsExactly("none", "downloading", "prepared", "installing", "failed");
    }

    /** Apple's payloadkeys semantics: type, presence, rangelist, range, macOS availability, no other keys. */
    private static void check(String where, JsonNode value, JsonNode keys, List<String> problems) {
        check(where, "", value, keys, problems);
    }

    private static void check(String where, String at, JsonNode object, JsonNode keys, List<String> problems) {
        Map<String, JsonNode> byName = new HashMap<>();
        keys.forEach(key -> byName.put(key.path("key").asText(), key));
        object.fieldNames().forEachRemaining(name -> {
            if (!byName.containsKey(name)) {
                problems.add(where + ": " + at + name + " is not a key Apple defines");
            }
        });
        for (JsonNode key : keys) {
            String name = key.path("key").asText();
            JsonNode value = object.get(name);
            if (value == null) {
                if (key.path("presence").asText().equals("required") && !key.path("macOS").asText().equals("n/a")) {
                    problems.add(where + ": " + at + name + " is required");
                }
                continue;
            }
            if (key.path("macOS").asText().equals("n/a")) {
                problems.add(where + ": " + at + name + " is not available on macOS");
                continue;
            }
            String type = key.path("type").asText();
            boolean right = switch (type) {
                case "string" -> value.isTextual();
                case "boolean" -> value.isBoolean();
                case "integer" -> value.isIntegralNumber();
                case "dictionary" -> value.isObject();
                case "array" -> value.isArray();
                default -> true;
            };
            if (!right) {
                problems.add(where + ": " + at + name + " must be a " + type);
                continue;
            }
            if (key.has("rangelist")) {
                List<String> allowed = new ArrayList<>();
                key.path("rangelist").forEach(v -> allowed.add(v.asText()));
                if (!allowed.contains(value.asText())) {
                    problems.add(where + ": " + at + name + " '" + value.asText() + "' is not one of " + key.path("rangelist"));
                }
            }
            if (key.has("range") && (value.asInt() < key.path("range").path("min").asInt() || value.asInt() > key.path("range").path("max").asInt())) {
                problems.add(where + ": " + at + name + " " + value.asInt() + " is outside " + key.path("range").path("min").asInt()
                        + "-" + key.path("range").path("max").asInt());
            }
            if (type.equals("dictionary") && key.has("subkeys")) {
                check(where, at + name + ".", value, key.path("subkeys"), problems);
            }
            if (type.equals("array") && key.has("subkeys") && key.path("subkeys").get(0).path("type").asText().equals("dictionary")) {
                for (JsonNode element : value) {
                    check(where, at + name + "[].", element, key.path("subkeys").get(0).path("subkeys"), problems);
                }
            }
            if (name.equals("TargetLocalDateTime") && !value.asText().matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}")) {
                problems.add(where + ": TargetLocalDateTime '" + value.asText() + "' is not yyyy-mm-ddThh:mm:ss");
            }
        }
    }
}
