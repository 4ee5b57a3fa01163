package io.macfleet.node.gguf;

import io.macfleet.node.Main;
import io.macfleet.node.TestModels;
import io.macfleet.node.engine.InferenceEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GgufFileTest {
    @TempDir
    Path directory;

    @Test
    void roundTripsMetadataAndTensors() throws IOException {
        Path file = directory.resolve("small.gguf");
        new GgufWriter()
                .putString("general.architecture", "llama")
                .putUInt32("answer", 42)
                .putFloat32("pi", 3.25)
                .putBool("yes", true)
                .putArray("names", GgufValueType.STRING, List.of("a", "b"))
                .putArray("ids", GgufValueType.INT32, List.of(-1, 2))
                .addTensor("t", GgmlType.F32, new long[]{4, 2}, segment -> {
                    for (int i = 0; i < 8; i++) {
                        segment.set(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * i, i);
                    }
                })
                .addTensor("q", GgmlType.Q8_0, new long[]{32}, segment -> segment.fill((byte) 1))
                .write(file);
        try (GgufFile gguf = GgufFile.open(file)) {
            assertThat(gguf.version()).isEqualTo(3);
            assertThat(gguf.string("general.architecture")).isEqualTo("llama");
            assertThat(gguf.integer("answer")).isEqualTo(42);
            assertThat(gguf.number("pi", 0)).isEqualTo(3.25);
            assertThat(gguf.bool("yes", false)).isTrue();
            assertThat(gguf.array("names")).containsExactly("a", "b");
            assertThat(gguf.array("ids")).containsExactly(-1L, 2L);
            TensorInfo t = gguf.tensor("t");
            assertThat(t.dimensions()).containsExactly(4, 2);
            assertThat(t.data().get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 28)).isEqualTo(7f);
            TensorInfo q = gguf.tensor("q");
            assertThat(q.byteSize()).isEqualTo(34);
            assertThat(gguf.dataOffset() % 32).isZero();
            assertThat((gguf.dataOffset() + q.offset()) % 32).isZero();
            assertThatThrownBy(() -> gguf.string("answer")).hasMessageContaining("small.gguf")
                    .hasMessageContaining("'answer' must be a string");
            assertThatThrownBy(() -> gguf.tensor("missing")).hasMessageContaining("missing tensor 'missing'");
        }
    }

    @Test
    void wrongMagicIsRejected() throws IOException {
        Path file = directory.resolve("text.gguf");
        Files.writeString(file, "this is not a model file at all");
        assertThatThrownBy(() -> GgufFile.open(file)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("text.gguf").hasMessageContaining("wrong magic");
    }

    @Test
    void unsupportedVersionIsRejected() throws IOException {
        Path file = directory.resolve("v9.gguf");
        Files.write(file, ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN).putInt(GgufFile.MAGIC).putInt(9).array());
        assertThatThrownBy(() -> GgufFile.open(file)).hasMessageContaining("unsupported GGUF version 9");
    }

    @Test
    void truncatedFilesNameWhatIsMissing() throws IOException {
        byte[] whole = Files.readAllBytes(TestModels.tiny(GgmlType.Q8_0));
        Path headerCut = directory.resolve("header-cut.gguf");
        Files.write(headerCut, java.util.Arrays.copyOf(whole, 1000));
        assertThatThrownBy(() -> GgufFile.open(headerCut)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("header-cut.gguf").hasMessageContaining("truncated");
        Path dataCut = directory.resolve("data-cut.gguf");
        Files.write(dataCut, java.util.Arrays.copyOf(whole, whole.length - 100));
        assertThatThrownBy(() -> GgufFile.open(dataCut)).hasMessageContaining("truncated: tensor 'output.weight' (Q8_0");
    }

    @Test
    void unsupportedTensorTypeNamesTensorAndType() throws IOException {
        Path file = directory.resolve("q4k.gguf");
        byte[] bytes = Files.readAllBytes(TestModels.tiny(GgmlType.F32));
        // Rewrite the type id of blk.0.attn_q.weight (F32 = 0) to other types in the tensor info.
        byte[] name = "blk.0.attn_q.weight".getBytes();
        int at = indexOf(bytes, name) + name.length + 4 + 2 * 8;
        assertThat(ByteBuffer.wrap(bytes, at, 4).order(ByteOrder.LITTLE_ENDIAN).getInt()).isZero();
        ByteBuffer.wrap(bytes, at, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(3);
        Files.write(file, bytes);
        assertThatThrownBy(() -> InferenceEngine.load(file, 64, 1)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("q4k.gguf").hasMessageContaining("blk.0.attn_q.weight")
                .hasMessageContaining("Q4_1").hasMessageContaining("does not support").hasMessageContaining("offset");
        ByteBuffer.wrap(bytes, at, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(20);
        Files.write(file, bytes);
        assertThatThrownBy(() -> InferenceEngine.load(file, 64, 1)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("blk.0.attn_q.weight").hasMessageContaining("IQ4_NL").hasMessageContaining("offset");
        // A K-quant (256 values per super-block) on 64-value rows is a malformed file, named as such.
        ByteBuffer.wrap(bytes, at, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(12);
        Files.write(file, bytes);
        assertThatThrownBy(() -> InferenceEngine.load(file, 64, 1)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("blk.0.attn_q.weight").hasMessageContaining("Q4_K")
                .hasMessageContaining("not a multiple of the block size 256");
    }

    @Test
    void wrongMetadataIsReported() throws IOException {
        Path file = directory.resolve("wrong.gguf");
        byte[] bytes = Files.readAllBytes(TestModels.tiny(GgmlType.F32));
        byte[] key = "llama.embedding_length".getBytes();
        int at = indexOf(bytes, key) + key.length + 4;
        ByteBuffer.wrap(bytes, at, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(96);
        Files.write(file, bytes);
        assertThatThrownBy(() -> InferenceEngine.load(file, 64, 1)).isInstanceOf(GgufFormatException.class)
                .hasMessageContaining("wrong.gguf").hasMessageContaining("token_embd.weight")
                .hasMessageContaining("[96, 512]");
        byte[] arch = "general.architecture".getBytes();
        int value = indexOf(bytes, arch) + arch.length + 4 + 8;
        System.arraycopy("gpt-j".getBytes(), 0, bytes, value, 5);
        Files.write(file, bytes);
        assertThatThrownBy(() -> InferenceEngine.load(file, 64, 1)).hasMessageContaining("unsupported architecture 'gpt-j'");
    }

    @Test
    void cliReportsBadFilesWithoutCrashing() throws Exception {
        Path file = directory.resolve("garbage.gguf");
        Files.writeString(file, "GGUF but not really");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        var run = Main.class.getDeclaredMethod("run", String[].class, PrintStream.class, PrintStream.class);
        run.setAccessible(true);
        int code = (int) run.invoke(null, new String[]{"generate", "--model", file.toString(), "--prompt", "hi"},
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("garbage.gguf").contains("unsupported GGUF version");
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found: " + new String(needle));
    }
}
