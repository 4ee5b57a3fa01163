package io.macfleet.node.grammar;

import io.macfleet.node.TestModels;
import io.macfleet.node.engine.GenerationOptions;
import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.engine.SamplingParameters;
import io.macfleet.node.gguf.GgmlType;
import io.macfleet.node.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Constrained outputs of the random tiny model: whatever its weights pick, a complete output parses and validates. */
class JsonSchemaConstraintTest {
    static final String SCHEMA = """
            {"type":"object","additionalProperties":false,"required":["name","age","tags","kind","home","score","ok","none","version"],
             "properties":{
               "name":{"type":"string","description":"annotations are allowed"},
               "age":{"type":"integer"},
               "tags":{"type":"array","items":{"enum":["red","green","blue"]}},
               "kind":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/point"}]},
               "home":{"$ref":"#/$defs/point"},
               "score":{"type":"number"},
               "ok":{"type":"boolean"},
               "none":{"type":"null"},
               "version":{"const":"v1"},
               "note":{"type":["string","null"]}},
             "$defs":{"point":{"type":"object","additionalProperties":false,"required":["x","y"],
               "properties":{"x":{"type":"integer"},"y":{"type":"number"}}}}}""";

    private static InferenceEngine engine;

    @BeforeAll
    static void load() throws Exception {
        engine = InferenceEngine.load(TestModels.tiny(GgmlType.Q8_0), 512, 1);
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    private static InferenceEngine.Generation generate(Node grammar, long seed, int maxTokens) {
        return engine.generate(engine.encodeCompletion("Answer in JSON:"),
                new SamplingParameters(1.0f, 0, 1, 0, seed, maxTokens, List.of()),
                new GenerationOptions(new GrammarConstraint(grammar, engine.tokenizer()), -1, 0, 0), text -> { });
    }

    @Test
    void everyCompleteOutputOfARandomModelParsesAndValidates() {
        Object schema = Json.parse(SCHEMA);
        Node grammar = SchemaCompiler.compile(schema);
        int complete = 0;
        for (long seed = 1; seed <= 12; seed++) {
            InferenceEngine.Generation result = generate(grammar, seed, 300);
            if (result.finishReason().equals("stop")) {
                complete++;
                Object value = Json.parse(result.text());
                assertThat(SchemaValidator.problem(value, schema)).as(result.text()).isNull();
            } else {
                assertThat(result.finishReason()).isEqualTo("length");
                assertThat(result.completionTokens()).isEqualTo(300);
            }
        }
        assertThat(complete).as("random walks through the schema that finish in 300 tokens").isGreaterThan(2);
    }

    @Test
    void recursiveDefinitionsGenerateValidTrees() {
        Object schema = Json.parse("""
                {"$ref":"#/$defs/node","$defs":{"node":{"type":"object","additionalProperties":false,
                  "required":["value","children"],"properties":{"value":{"type":"integer"},
                  "children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}""");
        Node grammar = SchemaCompiler.compile(schema);
        int complete = 0;
        for (long seed = 1; seed <= 6; seed++) {
            InferenceEngine.Generation result = generate(grammar, seed, 200);
            if (result.finishReason().equals("stop")) {
                complete++;
                assertThat(SchemaValidator.problem(Json.parse(result.text()), schema)).as(result.text()).isNull();
            }
        }
        assertThat(complete).isPositive();
    }

    @Test
    void oneSpaceAfterColonsAndCommasIsAllowedAndNoMore() {
        Node grammar = SchemaCompiler.compile(Json.parse(SCHEMA));
        String spaced = "{\"name\": \"a\", \"age\": 1, \"tags\": [\"red\", \"blue\"], \"kind\": null, "
                + "\"home\": {\"x\": 0, \"y\": 1}, \"score\": 2, \"ok\": true, \"none\": null, \"version\": \"v1\"}";
        assertThat(accepts(grammar, spaced)).isTrue();
        assertThat(accepts(grammar, spaced.replace("\"age\": 1", "\"age\":  1"))).isFalse();
        assertThat(accepts(grammar, spaced.replace("{\"name\"", "{ \"name\""))).isFalse();
    }

    @Test
    void theSameSchemaReusesItsGrammarAndMasksAcrossRequests() {
        Node first = GrammarCache.get("test " + SCHEMA, () -> SchemaCompiler.compile(Json.parse(SCHEMA)));
        Node second = GrammarCache.get("test " + SCHEMA, () -> SchemaCompiler.compile(Json.parse(SCHEMA)));
        assertThat(second).isSameAs(first);
        byte[] prefix = "{\"name\":\"".getBytes(StandardCharsets.UTF_8);
        GrammarConstraint earlier = new GrammarConstraint(first, engine.tokenizer());
        earlier.acceptBytes(prefix);
        earlier.allowed();
        GrammarConstraint later = new GrammarConstraint(second, engine.tokenizer());
        later.acceptBytes(prefix);
        assertThat(later.allowed()).isEqualTo(earlier.allowed());
        assertThat(later.walks).as("the string state's mask came from the earlier request").isZero();
    }

    @Test
    void jsonObjectModeGivesAnObject() {
        for (long seed = 1; seed <= 6; seed++) {
            InferenceEngine.Generation result = generate(Node.anyObject(), seed, 200);
            if (result.finishReason().equals("stop")) {
                assertThat(Json.parse(result.text())).isInstanceOf(Map.class);
            }
        }
    }

    @Test
    void tooFewTokensGiveLengthAndAnIncompleteText() {
        InferenceEngine.Generation result = generate(SchemaCompiler.compile(Json.parse(SCHEMA)), 3, 5);
        assertThat(result.finishReason()).isEqualTo("length");
        assertThat(result.text()).startsWith("{");
        assertThatThrownBy(() -> Json.parse(result.text())).isInstanceOf(Json.JsonException.class);
    }

    @Test
    void anEnumEndsWithoutSamplingOnceComplete() {
        Node grammar = SchemaCompiler.compile(Json.parse("{\"enum\":[\"yes\",\"no\"]}"));
        for (long seed = 1; seed <= 4; seed++) {
            InferenceEngine.Generation result = generate(grammar, seed, 50);
            assertThat(result.finishReason()).isEqualTo("stop");
            assertThat(result.text()).isIn("\"yes\"", "\"no\"");
        }
    }

    @Test
    void theAutomatonAcceptsValidAndRefusesInvalidText() {
        Node grammar = SchemaCompiler.compile(Json.parse(SCHEMA));
        String valid = "{\"name\":\"a\\u00e9\\\"é\",\"age\":-12,\"tags\":[\"red\",\"blue\"],\"kind\":null,"
                + "\"home\":{\"x\":0,\"y\":1.5e-3},\"score\":2,\"ok\":false,\"none\":null,\"version\":\"v1\",\"note\":null}";
        assertThat(accepts(grammar, valid)).isTrue();
        assertThat(accepts(grammar, valid.replace("\"age\":-12", "\"age\":1.5"))).isFalse();
        assertThat(accepts(grammar, valid.replace("\"red\"", "\"pink\""))).isFalse();
        assertThat(accepts(grammar, valid.replace(",\"note\":null", ",\"extra\":1"))).isFalse();
        assertThat(accepts(grammar, valid.replace("\"age\":-12,", ""))).isFalse();
        assertThat(accepts(grammar, valid.replace("\"age\":-12", "\"age\":012"))).isFalse();
        assertThat(accepts(grammar, "{\"name\":\"\u0001\"")).isFalse();
    }

    private static boolean accepts(Node grammar, String text) {
        GrammarConstraint constraint = new GrammarConstraint(grammar, engine.tokenizer());
        return constraint.acceptBytes(text.getBytes(StandardCharsets.UTF_8)) && constraint.canEnd();
    }

    @Test
    void schemasOutsideTheSubsetAreRefusedByKeyword() {
        assertThatThrownBy(() -> SchemaCompiler.compile(Json.parse("{\"type\":\"string\",\"pattern\":\"^a\"}")))
                .isInstanceOf(SchemaException.class).hasMessageContaining("'pattern'")
                .extracting(e -> ((SchemaException) e).keyword()).isEqualTo("pattern");
        assertThatThrownBy(() -> SchemaCompiler.compile(Json.parse(
                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"minItems\":2}}}")))
                .hasMessageContaining("'minItems' at #/properties/a");
        assertThatThrownBy(() -> SchemaCompiler.compile(Json.parse("{\"$ref\":\"#/$defs/missing\"}")))
                .hasMessageContaining("$ref");
        assertThatThrownBy(() -> SchemaCompiler.compile(Json.parse("{\"type\":\"date\"}")))
                .hasMessageContaining("'date'");
    }
}
