import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.model.DecoderModel;
import io.macfleet.node.model.KvCache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node's side of ggml-parity.sh (run by hand, not in CI).
 *   prompt MODEL TEXT               prints the prompt's token ids (with BOS), as the node encodes a completion
 *   compare MODEL DIR PROMPT IDS... teacher-forced: the first PROMPT ids as one batch, then one id per step; compares
 *                                   the node's logits with llama_dump's DIR/logits-NN.bin bit for bit
 * Run with -Dinference.ggmlOrder=true to compare ggml's float order (and -Dinference.probe=DIR for tensor dumps).
 */
public class NodeLogits {
    public static void main(String[] args) throws Exception {
        try (InferenceEngine engine = InferenceEngine.load(Path.of(args[1]), 256, 2)) {
            if (args[0].equals("prompt")) {
                StringBuilder ids = new StringBuilder();
                for (int id : engine.encodeCompletion(args[2])) {
                    ids.append(id).append(' ');
                }
                System.out.println(ids.toString().trim());
                return;
            }
            Path dir = Path.of(args[2]);
            int prompt = Integer.parseInt(args[3]);
            int[] ids = new int[args.length - 4];
            for (int i = 4; i < args.length; i++) {
                ids[i - 4] = Integer.parseInt(args[i]);
            }
            DecoderModel model = engine.model();
            KvCache cache = model.allocateCache(256);
            float[] logits = model.forward(ids, 0, prompt, 0, cache);
            int identical = 0, steps = 0;
            for (int step = 0, position = prompt; ; step++, position++) {
                FloatBuffer buffer = ByteBuffer.wrap(Files.readAllBytes(dir.resolve(String.format("logits-%02d.bin", step))))
                        .order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
                float[] reference = new float[buffer.remaining()];
                buffer.get(reference);
                double maxDifference = 0;
                int differing = 0, node = 0, llama = 0;
                for (int j = 0; j < reference.length; j++) {
                    maxDifference = Math.max(maxDifference, Math.abs(reference[j] - logits[j]));
                    differing += Float.floatToRawIntBits(reference[j]) != Float.floatToRawIntBits(logits[j]) ? 1 : 0;
                    node = logits[j] > logits[node] ? j : node;
                    llama = reference[j] > reference[llama] ? j : llama;
                }
                steps++;
                identical += differing == 0 ? 1 : 0;
                System.out.printf("step %2d: %4d of %d logits differ in their bits, largest difference %.3g; argmax node %d, llama.cpp %d%s%n",
                        step, differing, reference.length, maxDifference, node, llama, node == llama ? "" : "  <- differs");
                if (position >= ids.length) {
                    break;
                }
                logits = model.forward(ids, position, 1, position, cache);
            }
            System.out.printf("%d of %d steps bit-identical%n", identical, steps);
        }
    }
}
