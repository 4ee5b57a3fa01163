package io.macfleet.node.gguf;

/** Metadata value types of GGUF (gguf_metadata_value_type). */
public enum GgufValueType {
    UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64;

    public static GgufValueType byId(int id) {
        return id >= 0 && id < values().length ? values()[id] : null;
    }
}
