package io.macfleet.provision;

import io.macfleet.facts.MachineFacts;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A step's {@code when}: the step applies to a machine only if one of its facts has a value, e.g.
 * {@code when: {fact: bootstrapTokenSupportedOnServer, equals: true}}.
 */
public record Condition(String fact, Object equals) {

    /** The facts a condition can name: the scalar fields of {@link MachineFacts}. */
    public static final List<String> FACTS = Arrays.stream(MachineFacts.class.getRecordComponents())
            .filter(component -> component.getType().isPrimitive() || component.getType() == String.class
                    || Number.class.isAssignableFrom(component.getType()) || component.getType() == Boolean.class)
            .map(RecordComponent::getName)
            .filter(name -> !name.equals("machine") && !name.equals("observedAt"))
            .toList();

    public Condition {
        if (!FACTS.contains(fact)) {
            throw new IllegalArgumentException("unknown fact '" + fact + "' in when; expected one of " + String.join(", ", FACTS));
        }
    }

    public boolean holds(MachineFacts facts) {
        Object value;
        try {
            value = MachineFacts.class.getMethod(fact).invoke(facts);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read fact " + fact, e);
        }
        if (value instanceof Number number && equals instanceof Number expected) {
            return number.doubleValue() == expected.doubleValue();
        }
        return Objects.equals(String.valueOf(value), String.valueOf(equals));
    }

    public String describe() {
        return fact + " == " + equals;
    }
}
