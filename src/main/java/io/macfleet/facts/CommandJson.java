package io.macfleet.facts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Reads the JSON a command printed ({@code system_profiler -json ...}); output that is not JSON is a
 * {@link FactsParseException} naming the command and the position.
 */
final class CommandJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private CommandJson() {
    }

    static JsonNode read(String command, String output) {
        try {
            return JSON.readTree(output);
        } catch (JsonProcessingException e) {
            throw new FactsParseException(command, "not valid JSON at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ": " + e.getOriginalMessage());
        }
    }
}
