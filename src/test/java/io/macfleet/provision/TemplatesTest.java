package io.macfleet.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Placeholders: values from the machine, words when it has none, secrets resolved and marked. */
class TemplatesTest {

    private static Templates.Variables machine(Map<String, Object> entry) {
        return new Templates.Variables() {
            @Override
            public Object lookup(List<String> path) {
                Object value = Map.of("machine", entry);
                for (String key : path) {
                    value = value instanceof Map<?, ?> map ? map.get(key) : null;
                }
                return value;
            }

            @Override
            public String resolveSecret(String reference) {
                return "resolved(" + reference + ")";
            }
        };
    }

    @Test
    void aFallbackIsUsedOnlyWhenTheMachineHasNoValue() {
        String text = "pick the administrator user {{ machine.volumeOwner.user or 'who is a volume owner' }}, then Next";
        Templates.validate(text);
        assertThat(Templates.render(text, machine(Map.of("volumeOwner", Map.of("user", "admin")))).text())
                .isEqualTo("pick the administrator user admin, then Next");
        assertThat(Templates.render(text, machine(Map.of("name", "studio-01"))).text())
                .isEqualTo("pick the administrator user who is a volume owner, then Next");
    }

    @Test
    void withoutAFallbackAMissingValueFailsTheStepNamingIt() {
        assertThatThrownBy(() -> Templates.render("user {{ machine.volumeOwner.user }}", machine(Map.of())))
                .isInstanceOf(StepFailedException.class)
                .hasMessage("placeholder {{ machine.volumeOwner.user }} has no value for this machine (set it in the inventory)");
    }

    @Test
    void secretsAreResolvedAndMarkedAndHaveNoFallback() {
        Templates.Rendered rendered = Templates.render("{{ secret machine.volumeOwner.password }}",
                machine(Map.of("volumeOwner", Map.of("password", "env:OWNER_PASSWORD"))));
        assertThat(rendered.text()).isEqualTo("resolved(env:OWNER_PASSWORD)");
        assertThat(rendered.secret()).isTrue();
        assertThatThrownBy(() -> Templates.validate("{{ secret machine.volumeOwner.password or 'x' }}"))
                .hasMessage("a secret has no fallback: '{{ secret machine.volumeOwner.password or 'x' }}'");
        assertThatThrownBy(() -> Templates.validate("{{ machine.name or \"double quotes\" }}")).hasMessageStartingWith("malformed placeholder");
    }
}
