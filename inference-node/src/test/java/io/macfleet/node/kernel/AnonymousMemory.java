package io.macfleet.node.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** Experiment: anonymous memory mapped directly, 2 MB aligned, optionally madvise(MADV_HUGEPAGE) before first touch. */
final class AnonymousMemory {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MMAP = LINKER.downcallHandle(LINKER.defaultLookup().find("mmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
    private static final MethodHandle MADVISE = LINKER.downcallHandle(LINKER.defaultLookup().find("madvise").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final long HUGE = 2L << 20;

    static MemorySegment allocate(long bytes, boolean hugePages) {
        try {
            long size = (bytes + HUGE - 1) / HUGE * HUGE;
            MemorySegment raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, size + HUGE, 0x1 | 0x2, 0x02 | 0x20, -1, 0L);
            if (raw.address() == -1L) {
                throw new IllegalStateException("mmap failed");
            }
            long aligned = (raw.address() + HUGE - 1) / HUGE * HUGE;
            MemorySegment segment = MemorySegment.ofAddress(aligned).reinterpret(size);
            if (hugePages) {
                int result = (int) MADVISE.invokeExact(segment, size, 14);
                if (result != 0) {
                    throw new IllegalStateException("madvise(MADV_HUGEPAGE) failed");
                }
            }
            return segment.asSlice(0, bytes);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
