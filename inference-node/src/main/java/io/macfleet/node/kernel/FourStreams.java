package io.macfleet.node.kernel;

/**
 * The task loop of the four-stream decode products (Q8_0 in {@link Kernels}, Q4_0, Q4_K and Q6_K in
 * {@link NibbleKernels}), written once: a unit of work is 4 x span rows of one matrix, and each pass of a kernel
 * computes rows k, k + span, k + 2 span, k + 3 span, so each of its four load streams walks forward through a
 * contiguous run of span rows (why that is faster: {@link Kernels#matvecQ8Streams}). Smaller matrices get a shorter
 * span, so that each worker has several units to claim; rows past the last full unit run as units of span 1 (four
 * consecutive rows), and the last one to three rows through {@link Kernels#dot}. All matrices share one parallel loop
 * (decode's Q/K/V and gate/up products have the same input).
 * <p>
 * Each matrix brings its own {@link Unit}, and the loop calls it once per unit (4 x span rows). That call is the only
 * place the types meet: with several kernel types the call site is megamorphic and not inlined, which costs one
 * indirect call per unit and hands over only ints; inside each {@link Unit} the kernel is a static call that C2 sees
 * for one type only. A type switch per four rows inside one shared loop (what {@code NibbleKernels.fourRows} did)
 * made one compiled method hold the Q4_K and Q6_K kernels of a mixed file at once.
 */
final class FourStreams {
    /** Most rows per stream. */
    static final int SPAN = 64;

    private FourStreams() {
    }

    /** The kernel of one matrix: four streams of {@code span} rows each. */
    @FunctionalInterface
    interface Unit {
        /**
         * Rows {@code first + i}, {@code first + i + span}, {@code first + i + 2 span} and {@code first + i + 3 span}
         * for every {@code i < span} (the four streams start {@code span} rows apart).
         */
        void rows(int first, int span);
    }

    /**
     * Runs {@code units[m]} over all rows of {@code matrices[m]} for every m (and {@link Kernels#dot} into
     * {@code outs[m]} for the last rows that do not fill four), in one parallel loop.
     */
    static void run(WorkerPool pool, WeightMatrix[] matrices, float[] x, float[][] outs, Unit[] units) {
        float[][] xs = new float[matrices.length][];
        java.util.Arrays.fill(xs, x);
        run(pool, matrices, xs, outs, units);
    }

    /** {@link #run(WorkerPool, WeightMatrix[], float[], float[][], Unit[])} with each matrix's own input {@code xs[m]}. */
    static void run(WorkerPool pool, WeightMatrix[] matrices, float[][] xs, float[][] outs, Unit[] units) {
        int count = matrices.length;
        int[] span = new int[count], fullUnits = new int[count], firstTask = new int[count + 1];
        for (int m = 0; m < count; m++) {
            int rows = matrices[m].rows();
            span[m] = Math.max(1, Math.min(SPAN, rows / (8 * pool.size())));
            fullUnits[m] = rows / (4 * span[m]);
            int tail = rows - fullUnits[m] * 4 * span[m];
            firstTask[m + 1] = firstTask[m] + fullUnits[m] + (tail + 3) / 4;
        }
        pool.parallelFor(firstTask[count], (start, end, worker) -> {
            int m = 0;
            for (int task = start; task < end; task++) {
                while (task >= firstTask[m + 1]) {
                    m++;
                }
                int local = task - firstTask[m];
                if (local < fullUnits[m]) {
                    units[m].rows(local * 4 * span[m], span[m]);
                    continue;
                }
                int r = fullUnits[m] * 4 * span[m] + (local - fullUnits[m]) * 4;
                WeightMatrix matrix = matrices[m];
                if (r + 4 <= matrix.rows()) {
                    units[m].rows(r, 1);
                } else {
                    for (; r < matrix.rows(); r++) {
                        outs[m][r] = Kernels.dot(matrix, r, xs[m], 0);
                    }
                }
            }
        });
    }
}
