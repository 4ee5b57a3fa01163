package io.macfleet.mdm;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * A DDM declaration as a server stores it: {@code Type}, {@code Identifier}, {@code Payload}. The server computes the
 * {@code ServerToken} from the content (KMFDDM does; a token we sent would be ignored), so it is not part of this
 * record. The payload stays a JSON object because each declaration type has its own keys (Apple's field lists are
 * checked in tests, not by this record).
 */
public record Declaration(String type, String identifier, ObjectNode payload) {
    public Declaration {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(identifier, "identifier");
        Objects.requireNonNull(payload, "payload");
        if (type.isBlank() || identifier.isBlank()) {
            throw new IllegalArgumentException("a declaration needs a Type and an Identifier (got Type '" + type
                    + "', Identifier '" + identifier + "')");
        }
        // Apple: "The size of this string should not exceed 64 octets" (declarationbase.yaml, Identifier).
        if (identifier.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 64) {
            throw new IllegalArgumentException("declaration identifier '" + identifier + "' is longer than the 64 octets Apple allows");
        }
    }
}
