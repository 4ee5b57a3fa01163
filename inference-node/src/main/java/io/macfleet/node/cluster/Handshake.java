package io.macfleet.node.cluster;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What two ranks must agree on before they work together, as ordered key=value lines: node version, model file
 * (size and SHA-256 of its header and tensor table), parallelism, number of ranks, context length and shard plan.
 */
record Handshake(Map<String, String> fields) {
    static Handshake of(String version, String model, String parallelism, int ranks, int context, String plan) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("node version", version);
        fields.put("model", model);
        fields.put("parallelism", parallelism);
        fields.put("ranks", Integer.toString(ranks));
        fields.put("context", Integer.toString(context));
        fields.put("plan", plan);
        return new Handshake(fields);
    }

    String text() {
        StringBuilder out = new StringBuilder();
        fields.forEach((key, value) -> out.append(key).append('=').append(value).append('\n'));
        return out.toString();
    }

    static Handshake parse(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int equals = line.indexOf('=');
            if (equals > 0) {
                fields.put(line.substring(0, equals), line.substring(equals + 1));
            }
        }
        return new Handshake(fields);
    }

    /** The first field that differs, as a sentence naming both values; null when they agree. */
    String difference(Handshake theirs, int rank, int peer) {
        for (Map.Entry<String, String> field : fields.entrySet()) {
            String other = theirs.fields.get(field.getKey());
            if (!field.getValue().equals(other)) {
                return field.getKey() + " differs: rank " + rank + " has " + field.getValue() + ", rank " + peer
                        + " has " + (other == null ? "nothing (older node?)" : other);
            }
        }
        return null;
    }
}
