package io.macfleet.node.model;

/** Layers [first, end) of a model: what one pipeline stage holds. */
public record LayerRange(int first, int end) {
    public LayerRange {
        if (first < 0 || end < first) {
            throw new IllegalArgumentException("invalid layer range " + first + ".." + end);
        }
    }

    public int count() {
        return end - first;
    }

    public boolean contains(int layer) {
        return layer >= first && layer < end;
    }
}
