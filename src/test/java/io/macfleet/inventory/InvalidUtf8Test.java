package io.macfleet.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Invalid UTF-8 in an inventory file is an error naming the byte offset, never silently replaced (issue 14, item 11). */
class InvalidUtf8Test {

    @TempDir
    Path directory;

    @Test
    void theErrorNamesTheByteAndTheLine() throws Exception {
        byte[] text = "machines:\n  - name: studio-01\n    address: 10.0.0.1\n    labels: {room: X}\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        int offset = new String(text, java.nio.charset.StandardCharsets.US_ASCII).indexOf('X');
        text[offset] = (byte) 0xc3; // a lead byte without its continuation
        Files.write(directory.resolve("fleet.yaml"), text);
        LoadResult result = InventoryLoader.load(directory);
        assertThat(result.valid()).isFalse();
        assertThat(result.errors()).singleElement().satisfies(error -> {
            assertThat(error.message()).contains("invalid UTF-8 at byte " + offset);
            assertThat(error.line()).isEqualTo(4);
        });
    }
}
