package io.macfleet.models;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether a model fits a cluster's Macs: each Mac holds a share of the weights by its memory weight (its memory over
 * the cluster's, as the runtimes split layers or tensor rows) and the same share of the KV cache for the context and
 * slots; that must stay within what its GPU may wire: {@code iogpu.wired_limit_mb} when the Mac sets it, else macOS's
 * default share of unified memory ({@link #DEFAULT_GPU_SHARE}, the figure {@code LlamaCppRuntime} assumes too).
 * Compute buffers and the OS's own use are not counted: a model that fits here may still need a smaller context.
 */
public final class MemoryFit {

    /** The share of unified memory macOS lets the GPU wire by default on these machines (iogpu.wired_limit_mb raises it). */
    public static final double DEFAULT_GPU_SHARE = 0.75;
    private static final long MIB = 1L << 20;
    private static final double GIB = 1L << 30;

    /**
     * One Mac of the cluster.
     *
     * @param memorySource where {@code memoryBytes} came from ({@code hw.memsize}, the inventory's {@code memoryGb}), or null
     * @param wiredLimitMb {@code sysctl iogpu.wired_limit_mb} as gathered: greater than 0 when the Mac sets a limit, 0 for
     *                     macOS's default share, null when not gathered (no facts, or a macOS without that setting)
     */
    public record Mac(String name, long memoryBytes, String memorySource, Long wiredLimitMb) {

        public Mac(String name, long memoryBytes, Long wiredLimitMb) {
            this(name, memoryBytes, null, wiredLimitMb);
        }

        public long usableBytes() {
            return wiredLimitMb != null && wiredLimitMb > 0 ? wiredLimitMb * MIB : (long) (memoryBytes * DEFAULT_GPU_SHARE);
        }

        /** Where the usable figure comes from, in words, so an operator can tell a measured limit from an assumption. */
        public String usableFrom() {
            if (wiredLimitMb != null && wiredLimitMb > 0) {
                return "wired limit " + wiredLimitMb + " MB from iogpu.wired_limit_mb";
            }
            return String.format(Locale.ROOT, "default %.0f %% of %s%s (iogpu.wired_limit_mb %s)", DEFAULT_GPU_SHARE * 100, gib(memoryBytes),
                    memorySource == null ? "" : " from " + memorySource, wiredLimitMb == null ? "not gathered" : "is 0: macOS's default");
        }
    }

    /** The runtime settings that size the KV cache: tokens of context per slot, and slots (parallel sequences). */
    public record Settings(int context, int slots) {
        public Settings {
            if (context <= 0 || slots <= 0) {
                throw new ModelRefused("context and slots must be positive (got context " + context + ", slots " + slots + ")");
            }
        }
    }

    /** One Mac's share: weights + KV cache = needed, against usable. */
    public record MacFit(String machine, long weightBytes, long keyValueBytes, long neededBytes, long usableBytes, String usableFrom,
                         boolean fits) {
    }

    /** The answer for a cluster; {@code message} says it in words with the numbers. */
    public record Result(String model, String cluster, int context, int slots, boolean keyValueCounted, List<MacFit> machines, boolean fits,
                         String message) {
    }

    private MemoryFit() {
    }

    public static Result check(CatalogueModel model, ModelShape shape, String cluster, List<Mac> macs, Settings settings) {
        if (macs.isEmpty()) {
            throw new ModelRefused("cluster " + cluster + " has no machines");
        }
        List<Mac> unknown = macs.stream().filter(mac -> mac.memoryBytes() <= 0).toList();
        if (!unknown.isEmpty()) {
            throw new ModelRefused("the memory of " + String.join(", ", unknown.stream().map(Mac::name).toList()) + " is not known: set memoryGb"
                    + " in the inventory or gather facts (macfleet facts " + cluster + ")");
        }
        long totalMemory = macs.stream().mapToLong(Mac::memoryBytes).sum();
        long keyValueTotal = shape.keyValueBytesPerToken() * settings.context() * settings.slots();
        List<MacFit> fits = new ArrayList<>();
        for (Mac mac : macs) {
            double share = mac.memoryBytes() / (double) totalMemory;
            long weights = (long) Math.ceil(model.totalBytes() * share);
            long keyValue = (long) Math.ceil(keyValueTotal * share);
            long needed = weights + keyValue;
            fits.add(new MacFit(mac.name(), weights, keyValue, needed, mac.usableBytes(), mac.usableFrom(), needed <= mac.usableBytes()));
        }
        boolean fitsAll = fits.stream().allMatch(MacFit::fits);
        StringBuilder message = new StringBuilder();
        message.append(String.format(Locale.ROOT, "model %s (%s) on cluster %s, context %d x %d slot(s)%s: %s", model.name(),
                gib(model.totalBytes()), cluster, settings.context(), settings.slots(), shape.known() ? "" : " (KV cache not counted: the model"
                        + " does not state its attention shape)", fitsAll ? "fits" : "does not fit"));
        for (MacFit fit : fits) {
            message.append(String.format(Locale.ROOT, "%n  %s: needs %s (weights %s + KV cache %s) of %s usable (%s)%s", fit.machine(),
                    gib(fit.neededBytes()), gib(fit.weightBytes()), gib(fit.keyValueBytes()), gib(fit.usableBytes()), fit.usableFrom(),
                    fit.fits() ? "" : String.format(Locale.ROOT, ": %s short", gib(fit.neededBytes() - fit.usableBytes()))));
        }
        if (!fitsAll) {
            message.append(String.format(Locale.ROOT, "%n  choose a smaller quantization, a shorter context or fewer slots, add Macs,"
                    + " or raise iogpu.wired_limit_mb"));
        }
        return new Result(model.name(), cluster, settings.context(), settings.slots(), shape.known(), fits, fitsAll, message.toString());
    }

    static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.2f GiB", bytes / GIB);
    }
}
