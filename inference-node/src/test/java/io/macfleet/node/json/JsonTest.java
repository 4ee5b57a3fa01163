package io.macfleet.node.json;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonTest {
    @Test
    void parsesAllValueKinds() {
        Object value = Json.parse(" {\"a\": [1, -2.5, 1e3, true, false, null], \"s\": \"x\\n\\u00e9\\\"\", \"o\": {}} ");
        assertThat(value).isEqualTo(Map.of("a", Arrays.asList(1L, -2.5, 1000.0, true, false, null), "s", "x\né\"", "o", Map.of()));
    }

    @Test
    void writesWhatItReads() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("text", "line\n\t\"quoted\" \u0001");
        map.put("numbers", List.of(1, 2.5, 0.1, -7L));
        map.put("nothing", null);
        map.put("flag", true);
        String json = Json.write(map);
        assertThat(json).isEqualTo("{\"text\":\"line\\n\\t\\\"quoted\\\" \\u0001\",\"numbers\":[1,2.5,0.1,-7],\"nothing\":null,\"flag\":true}");
        Map<?, ?> parsed = (Map<?, ?>) Json.parse(json);
        assertThat(parsed.get("text")).isEqualTo(map.get("text"));
        assertThat(parsed.containsKey("nothing")).isTrue();
        assertThat(((Map<?, ?>) Json.parse(json)).get("numbers")).isEqualTo(List.of(1L, 2.5, 0.1, -7L));
    }

    @Test
    void rejectsMalformedInputWithOffset() {
        assertThatThrownBy(() -> Json.parse("{\"a\": }")).hasMessageContaining("offset 6");
        assertThatThrownBy(() -> Json.parse("[1, 2")).hasMessageContaining("unexpected end");
        assertThatThrownBy(() -> Json.parse("{} x")).hasMessageContaining("trailing");
        assertThatThrownBy(() -> Json.parse("01")).isInstanceOf(Json.JsonException.class);
        assertThatThrownBy(() -> Json.parse("\"\\q\"")).hasMessageContaining("bad escape");
    }
}
