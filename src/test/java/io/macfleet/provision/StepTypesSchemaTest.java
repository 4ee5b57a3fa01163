package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/**
 * schemas/playbook.schema.json against the registered step types: every step type has its entry (its name in
 * {@code type}'s examples, a {@code $defs/params/$defs/NAME} naming exactly the components of its parameters record, wired in
 * by an if/then on the type), and the schema has no entry for a step type that is not registered.
 */
class StepTypesSchemaTest {

    private static final JsonNode SCHEMA = read();

    @Test
    void everyRegisteredStepTypeHasItsSchemaEntryAndEveryEntryItsStepType() {
        List<String> registered = StepTypes.builtIn().names();
        List<String> documented = new ArrayList<>();
        SCHEMA.at("/$defs/params/$defs").fieldNames().forEachRemaining(documented::add);
        assertThat(documented).as("step types in $defs/params/$defs of the schema").containsExactlyElementsOf(registered);
        assertThat(texts(SCHEMA.at("/$defs/step/properties/type/examples"))).as("the examples of a step's type").containsExactlyElementsOf(registered);
        List<String> wired = new ArrayList<>();
        for (JsonNode condition : SCHEMA.at("/$defs/step/allOf")) {
            String type = condition.at("/if/properties/type/const").asText();
            assertThat(condition.at("/then/properties/params/$ref").asText()).isEqualTo("#/$defs/params/$defs/" + type);
            wired.add(type);
        }
        assertThat(wired).as("step types whose params the schema refers to").containsExactlyElementsOf(registered);
    }

    @Test
    void theSchemaNamesExactlyTheParametersOfEachStepType() {
        for (StepType<?> type : StepTypes.builtIn().all()) {
            List<String> components = Arrays.stream(type.parameters().getRecordComponents()).map(java.lang.reflect.RecordComponent::getName).sorted().toList();
            List<String> documented = new ArrayList<>();
            SCHEMA.at("/$defs/params/$defs/" + type.name() + "/properties").fieldNames().forEachRemaining(documented::add);
            assertThat(documented).as("parameters of step type " + type.name() + " in the schema").containsExactlyInAnyOrderElementsOf(components);
        }
    }

    @Test
    void theScopeOfEveryStepTypeIsStatedAndOnlyCablingAndTheNodeDeploymentActOnAWholeCluster() {
        assertThat(StepTypes.builtIn().all().stream().filter(type -> type.scope() == PlaybookStep.Scope.CLUSTER).map(StepType::name))
                .containsExactly("cabling", "inference-node");
    }

    @Test
    void aStepTypeCannotTakeAReservedOrAnotherTypesName() {
        assertThatThrownBy(() -> new StepTypes(List.of(new CommandStep.Type(), new CommandStep.Type())))
                .hasMessageStartingWith("two step types named 'command'");
        assertThatThrownBy(() -> new StepTypes(List.of(named("mdm")))).hasMessageContaining("takes the reserved name 'mdm'");
        assertThatThrownBy(() -> new StepTypes(List.of(named("Shell")))).hasMessageContaining("expected lower case letters, digits and dashes");
    }

    private static StepType<?> named(String name) {
        return new SimpleStepType<>(name, CablingStep.Parameters.class, (parameters, files) -> new CablingStep(parameters)) { };
    }

    private static List<String> texts(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).toList();
    }

    private static JsonNode read() {
        try {
            return new ObjectMapper().readTree(Path.of("schemas/playbook.schema.json").toFile());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
