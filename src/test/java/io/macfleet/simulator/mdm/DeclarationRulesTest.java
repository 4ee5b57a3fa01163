package io.macfleet.simulator.mdm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulated Mac knows the same macOS keys as Apple's field lists, so it judges declarations as a real Mac would. */
class DeclarationRulesTest {

    @Test
    void theSimulatedMacKnowsExactlyTheMacosKeysAppleDefines() throws Exception {
        JsonNode apple = new ObjectMapper().readTree(Path.of("src/test/resources/device-management/declaration-fields.json").toFile()).path("declarations");
        for (String type : List.of(DeclarationRules.SETTINGS, DeclarationRules.SUBSCRIPTIONS, DeclarationRules.ENFORCEMENT, DeclarationRules.ACTIVATION)) {
            assertThat(names(DeclarationRules.TYPES.get(type))).as(type).containsExactlyInAnyOrderElementsOf(macosNames(apple.path(type).path("payloadkeys")));
        }
    }

    private static List<String> names(List<DeclarationRules.Key> keys) {
        List<String> names = new ArrayList<>();
        for (DeclarationRules.Key key : keys) {
            names.add(key.name());
            if (key.kind() == DeclarationRules.Kind.DICTIONARY) {
                names(key.subkeys()).forEach(sub -> names.add(key.name() + "." + sub));
            }
        }
        return names;
    }

    private static List<String> macosNames(JsonNode keys) {
        List<String> names = new ArrayList<>();
        for (JsonNode key : keys) {
            if (key.path("macOS").asText().equals("n/a")) {
                continue;
            }
            String name = key.path("key").asText();
            names.add(name);
            if (key.path("type").asText().equals("dictionary")) {
                macosNames(key.path("subkeys")).forEach(sub -> names.add(name + "." + sub));
            }
        }
        return names;
    }
}
