package io.macfleet.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The memory fit's arithmetic, with the numbers worked by hand. */
class MemoryFitTest {

    private static final long GIB = 1L << 30;
    /** 32 layers x 8 KV heads x 128 per head x (K and V) x 2 bytes (f16) = 128 KiB of KV cache per token. */
    private static final ModelShape SHAPE = new ModelShape(32, 8, 128, 131072);

    private static CatalogueModel model(long bytes) {
        return new CatalogueModel("big", "gguf", "llama", "Q4_K_M", List.of(new ModelFile("big.gguf", bytes, "0".repeat(64))), bytes,
                List.of("bundled", "llama.cpp"), "/models/big.gguf");
    }

    @Test
    void fourEqualMacsEachTakeAQuarterOfWeightsAndCache() {
        assertThat(SHAPE.keyValueBytesPerToken()).isEqualTo(128 * 1024);
        List<MemoryFit.Mac> macs = List.of(new MemoryFit.Mac("studio-01", 512 * GIB, null), new MemoryFit.Mac("studio-02", 512 * GIB, null),
                new MemoryFit.Mac("studio-03", 512 * GIB, null), new MemoryFit.Mac("studio-04", 512 * GIB, null));
        MemoryFit.Result result = MemoryFit.check(model(300 * GIB), SHAPE, "llm-a", macs, new MemoryFit.Settings(8192, 4));
        assertThat(result.fits()).isTrue();
        // 8192 x 4 tokens x 128 KiB = 4 GiB of cache, a quarter on each Mac; a quarter of 300 GiB of weights.
        assertThat(result.machines()).allSatisfy(mac -> {
            assertThat(mac.weightBytes()).isEqualTo(75 * GIB);
            assertThat(mac.keyValueBytes()).isEqualTo(GIB);
            assertThat(mac.neededBytes()).isEqualTo(76 * GIB);
            assertThat(mac.usableBytes()).isEqualTo(384 * GIB);
        });
        assertThat(result.message()).startsWith("model big (300.00 GiB) on cluster llm-a, context 8192 x 4 slot(s): fits")
                .contains("studio-01: needs 76.00 GiB (weights 75.00 GiB + KV cache 1.00 GiB) of 384.00 GiB usable (default 75 % of 512.00 GiB (iogpu.wired_limit_mb not gathered))");
    }

    @Test
    void unequalMacsShareByMemoryAndTheShortfallIsNamedWithItsNumbers() {
        List<MemoryFit.Mac> macs = List.of(new MemoryFit.Mac("studio-96", 96 * GIB, null), new MemoryFit.Mac("studio-256", 256 * GIB, null));
        MemoryFit.Result result = MemoryFit.check(model(300 * GIB), SHAPE, "llm-b", macs, new MemoryFit.Settings(8192, 4));
        assertThat(result.fits()).isFalse();
        // studio-96 holds 96/352 of 300 GiB = 81.82 GiB and of the 4 GiB cache = 1.09 GiB; it may wire 72 GiB.
        assertThat(result.message()).contains("does not fit",
                "studio-96: needs 82.91 GiB (weights 81.82 GiB + KV cache 1.09 GiB) of 72.00 GiB usable (default 75 % of 96.00 GiB (iogpu.wired_limit_mb not gathered)): 10.91 GiB short",
                "studio-256: needs 221.09 GiB (weights 218.18 GiB + KV cache 2.91 GiB) of 192.00 GiB usable",
                "raise iogpu.wired_limit_mb");

        List<MemoryFit.Mac> raised = List.of(new MemoryFit.Mac("studio-96", 96 * GIB, 88L * 1024), new MemoryFit.Mac("studio-256", 256 * GIB, 240L * 1024));
        MemoryFit.Result withLimit = MemoryFit.check(model(300 * GIB), SHAPE, "llm-b", raised, new MemoryFit.Settings(8192, 4));
        assertThat(withLimit.fits()).isTrue();
        assertThat(withLimit.machines().getFirst().usableBytes()).isEqualTo(88 * GIB);
        assertThat(withLimit.machines().getFirst().usableFrom()).isEqualTo("wired limit 90112 MB from iogpu.wired_limit_mb");
    }

    @Test
    void theCacheAloneCanBreakTheFitAndUnknownMemoryIsRefused() {
        List<MemoryFit.Mac> one = List.of(new MemoryFit.Mac("studio-01", 64 * GIB, null));
        assertThat(MemoryFit.check(model(40 * GIB), SHAPE, "solo", one, new MemoryFit.Settings(4096, 1)).fits()).isTrue();
        // 131072 tokens x 4 slots x 128 KiB = 64 GiB of cache on top of 40 GiB of weights.
        MemoryFit.Result longContext = MemoryFit.check(model(40 * GIB), SHAPE, "solo", one, new MemoryFit.Settings(131072, 4));
        assertThat(longContext.fits()).isFalse();
        assertThat(longContext.machines().getFirst().keyValueBytes()).isEqualTo(64 * GIB);

        MemoryFit.Result unknownShape = MemoryFit.check(model(40 * GIB), ModelShape.UNKNOWN, "solo", one, new MemoryFit.Settings(131072, 4));
        assertThat(unknownShape.keyValueCounted()).isFalse();
        assertThat(unknownShape.message()).contains("KV cache not counted");

        assertThatThrownBy(() -> MemoryFit.check(model(GIB), SHAPE, "llm-c", List.of(new MemoryFit.Mac("studio-09", 0, null)),
                new MemoryFit.Settings(4096, 1))).isInstanceOf(ModelRefused.class).hasMessageContaining("the memory of studio-09 is not known");
        assertThatThrownBy(() -> new MemoryFit.Settings(0, 1)).isInstanceOf(ModelRefused.class);
    }
}
