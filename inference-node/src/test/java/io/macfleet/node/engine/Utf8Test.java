package io.macfleet.node.engine;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class Utf8Test {
    @Test
    void holdsBackAnUnfinishedSequenceOnly() {
        byte[] euro = "€".getBytes(StandardCharsets.UTF_8); // 3 bytes
        byte[] text = "a€".getBytes(StandardCharsets.UTF_8);
        assertThat(InferenceEngine.completeUtf8Length(text)).isEqualTo(text.length);
        assertThat(InferenceEngine.completeUtf8Length(new byte[]{'a', euro[0], euro[1]})).isEqualTo(1);
        assertThat(InferenceEngine.completeUtf8Length(new byte[]{'a', euro[0]})).isEqualTo(1);
        assertThat(InferenceEngine.completeUtf8Length(new byte[]{'a', 'b'})).isEqualTo(2);
        byte[] emoji = "🙂".getBytes(StandardCharsets.UTF_8); // 4 bytes
        assertThat(InferenceEngine.completeUtf8Length(new byte[]{emoji[0], emoji[1], emoji[2]})).isZero();
    }
}
