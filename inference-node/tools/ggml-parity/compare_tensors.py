#!/usr/bin/env python3
"""ggml-parity.sh's tensor comparison: llama_dump's and the node's (-Dinference.probe) dumps of one step, by name.
usage: compare_tensors.py LLAMA_DIR NODE_DIR STEP NAME...   (names as llama.cpp's graph gives them, e.g. l_out-0)
Where llama.cpp keeps fewer rows (its last layer keeps the output token only), the node's last rows are compared."""
import array
import os
import struct
import sys


def load(path):
    data = open(path, 'rb').read()
    values = array.array('f')
    values.frombytes(data[32:])
    return struct.unpack('<4q', data[:32]), values


llama_dir, node_dir, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
for name in sys.argv[4:]:
    paths = [os.path.join(d, 't%02d-%s.bin' % (step, name)) for d in (llama_dir, node_dir)]
    if not all(os.path.exists(p) for p in paths):
        print('%-20s missing in %s' % (name, ', '.join(p for p in paths if not os.path.exists(p))))
        continue
    (dims, reference), (_, node) = load(paths[0]), load(paths[1])
    node = node[len(node) - len(reference):]
    columns = dims[0]
    largest, at, magnitude, identical = 0.0, 0, 0.0, 0
    for i, (r, n) in enumerate(zip(reference, node)):
        if abs(r - n) > largest:
            largest, at = abs(r - n), i
        magnitude = max(magnitude, abs(r))
        identical += struct.pack('<f', r) == struct.pack('<f', n)
    print('%-20s %6d of %6d values bit-identical; largest difference %.3g (relative %.3g) in row %d'
          % (name, identical, len(reference), largest, largest / magnitude if magnitude else 0, at // columns))
