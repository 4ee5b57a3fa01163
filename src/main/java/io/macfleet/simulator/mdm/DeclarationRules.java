package io.macfleet.simulator.mdm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How a simulated Mac (macOS 26) judges a declaration before applying it, with the reason codes of Apple's
 * declarationbase.yaml (apple/device-management): an unknown type is {@code Error.UnknownDeclarationType}; keys the
 * type does not define are {@code Error.UnknownPayloadKeys}; a missing required key or a value of the wrong type is
 * {@code Error.ConfigurationCannotBeDeserialized}; a value of the right type that cannot be used (a date in the wrong
 * format, an enum value Apple does not list) is {@code Error.ConfigurationIsInvalid}. Key lists are those of the
 * declaration YAML files (the same lists mdm-profiles' DeclarationTemplatesTest checks against).
 */
final class DeclarationRules {
    private DeclarationRules() {
    }

    /** A problem found: Apple's code, a description, details as field/value pairs. */
    record Problem(String code, String description, Map<String, Object> details) {
    }

    enum Kind { STRING, BOOLEAN, INTEGER, DICTIONARY, ARRAY }

    record Key(String name, Kind kind, boolean required, List<Key> subkeys, Set<String> allowed) {
        static Key of(String name, Kind kind, boolean required) {
            return new Key(name, kind, required, List.of(), Set.of());
        }

        static Key dictionary(String name, boolean required, Key... subkeys) {
            return new Key(name, Kind.DICTIONARY, required, List.of(subkeys), Set.of());
        }

        static Key choice(String name, Set<String> allowed) {
            return new Key(name, Kind.STRING, false, List.of(), allowed);
        }
    }

    private static final Set<String> ACTION = Set.of("Allowed", "AlwaysOn", "AlwaysOff");
    private static final Pattern LOCAL_DATE_TIME = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}");

    static final String ACTIVATION = "com.apple.activation.simple";
    static final String SUBSCRIPTIONS = "com.apple.configuration.management.status-subscriptions";
    static final String SETTINGS = "com.apple.configuration.softwareupdate.settings";
    static final String ENFORCEMENT = "com.apple.configuration.softwareupdate.enforcement.specific";

    /** Payload keys per declaration type a macOS 26 Mac in the simulator understands. */
    static final Map<String, List<Key>> TYPES = Map.of(
            ACTIVATION, List.of(new Key("StandardConfigurations", Kind.ARRAY, true, List.of(), Set.of()), Key.of("Predicate", Kind.STRING, false)),
            SUBSCRIPTIONS, List.of(new Key("StatusItems", Kind.ARRAY, true, List.of(Key.of("Name", Kind.STRING, true)), Set.of())),
            SETTINGS, List.of(
                    Key.of("Notifications", Kind.BOOLEAN, false),
                    Key.dictionary("Deferrals", false, Key.of("MajorPeriodInDays", Kind.INTEGER, false),
                            Key.of("MinorPeriodInDays", Kind.INTEGER, false), Key.of("SystemPeriodInDays", Kind.INTEGER, false)),
                    Key.dictionary("AutomaticActions", false, Key.choice("Download", ACTION), Key.choice("InstallOSUpdates", ACTION),
                            Key.choice("InstallSecurityUpdate", ACTION)),
                    Key.dictionary("RapidSecurityResponse", false, Key.of("Enable", Kind.BOOLEAN, false), Key.of("EnableRollback", Kind.BOOLEAN, false)),
                    Key.of("AllowStandardUserOSUpdates", Kind.BOOLEAN, false)),
            ENFORCEMENT, List.of(
                    Key.of("TargetOSVersion", Kind.STRING, true), Key.of("TargetBuildVersion", Kind.STRING, false),
                    Key.of("TargetLocalDateTime", Kind.STRING, true), Key.of("DetailsURL", Kind.STRING, false)),
            "com.apple.configuration.management.test", List.of(Key.of("Echo", Kind.STRING, true), Key.of("ReturnStatus", Kind.STRING, false)));

    static boolean isActivation(String type) {
        return type.startsWith("com.apple.activation.");
    }

    /** Empty when the Mac accepts the payload. */
    static Optional<Problem> check(String type, JsonNode payload) {
        List<Key> keys = TYPES.get(type);
        if (keys == null) {
            return Optional.of(new Problem("Error.UnknownDeclarationType", "Unknown Declaration Type", Map.of("UnknownDeclarationType", type)));
        }
        List<String> unknown = new ArrayList<>();
        Optional<Problem> problem = checkObject(type, "", payload, keys, unknown);
        if (problem.isPresent()) {
            return problem;
        }
        if (!unknown.isEmpty()) {
            return Optional.of(new Problem("Error.UnknownPayloadKeys", "Unknown payload keys", Map.of("UnknownPayloadKeys", List.copyOf(unknown))));
        }
        if (type.equals(ENFORCEMENT) && !LOCAL_DATE_TIME.matcher(payload.path("TargetLocalDateTime").asText()).matches()) {
            return Optional.of(invalid("TargetLocalDateTime '" + payload.path("TargetLocalDateTime").asText()
                    + "' is not in the format yyyy-mm-ddThh:mm:ss"));
        }
        if (type.equals(SETTINGS)) {
            for (Map.Entry<String, JsonNode> deferral : payload.path("Deferrals").properties()) {
                int days = deferral.getValue().asInt();
                if (days < 1 || days > 90) {
                    return Optional.of(invalid("Deferrals." + deferral.getKey() + " " + days + " is outside 1-90"));
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Problem> checkObject(String type, String at, JsonNode object, List<Key> keys, List<String> unknown) {
        if (!object.isObject()) {
            return Optional.of(undeserializable(type, (at.isEmpty() ? "Payload" : at) + " is not a dictionary"));
        }
        for (Key key : keys) {
            JsonNode value = object.get(key.name());
            String path = at.isEmpty() ? key.name() : at + "." + key.name();
            if (value == null) {
                if (key.required()) {
                    return Optional.of(undeserializable(type, "required key " + path + " is missing"));
                }
                continue;
            }
            boolean right = switch (key.kind()) {
                case STRING -> value.isTextual();
                case BOOLEAN -> value.isBoolean();
                case INTEGER -> value.isIntegralNumber();
                case DICTIONARY -> value.isObject();
                case ARRAY -> value.isArray();
            };
            if (!right) {
                return Optional.of(undeserializable(type, path + " must be a " + key.kind().name().toLowerCase(java.util.Locale.ROOT)));
            }
            if (!key.allowed().isEmpty() && !key.allowed().contains(value.asText())) {
                return Optional.of(invalid(path + " '" + value.asText() + "' is not one of " + key.allowed()));
            }
            if (key.kind() == Kind.DICTIONARY) {
                Optional<Problem> inner = checkObject(type, path, value, key.subkeys(), unknown);
                if (inner.isPresent()) {
                    return inner;
                }
            }
            if (key.kind() == Kind.ARRAY && !key.subkeys().isEmpty()) {
                for (JsonNode element : value) {
                    Optional<Problem> inner = checkObject(type, path + "[]", element, key.subkeys(), unknown);
                    if (inner.isPresent()) {
                        return inner;
                    }
                }
            }
        }
        Set<String> known = new java.util.HashSet<>();
        keys.forEach(key -> known.add(key.name()));
        object.fieldNames().forEachRemaining(name -> {
            if (!known.contains(name)) {
                unknown.add(at.isEmpty() ? name : at + "." + name);
            }
        });
        return Optional.empty();
    }

    private static Problem undeserializable(String type, String what) {
        return new Problem("Error.ConfigurationCannotBeDeserialized", "The configuration is not valid.",
                Map.of("Error", type + ": " + what));
    }

    private static Problem invalid(String what) {
        return new Problem("Error.ConfigurationIsInvalid", "The configuration is not valid for applying to the device.", Map.of("Error", what));
    }
}
