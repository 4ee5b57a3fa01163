import io.macfleet.node.engine.InferenceEngine;
import io.macfleet.node.model.KvCache;
import io.macfleet.node.model.DecoderModel;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Manual cross-check against llama.cpp (not run in CI), the node's side of llama-cpp-greedy.mjs: prints the prompt
 * ids of "Once upon a time" (with BOS) and 12 greedy token ids, each with its margin over the runner-up, so that a
 * divergence can be told apart from a near tie (llama.cpp quantizes activations to 8 bits; the node does not).
 *   java --add-modules jdk.incubator.vector -cp inference-node/target/classes inference-node/tools/NodeGreedy.java FILE...
 */
public class NodeGreedy {
    public static void main(String[] args) throws Exception {
        for (String file : args) {
            try (InferenceEngine engine = InferenceEngine.load(Path.of(file), 256, 2)) {
                List<Integer> prompt = engine.encodeCompletion("Once upon a time");
                DecoderModel model = engine.model();
                KvCache cache = model.allocateCache(256);
                int[] tokens = new int[prompt.size() + 12];
                for (int i = 0; i < prompt.size(); i++) {
                    tokens[i] = prompt.get(i);
                }
                float[] logits = model.forward(tokens, 0, prompt.size(), 0, cache);
                List<Integer> ids = new ArrayList<>();
                List<String> margins = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    int best = 0;
                    for (int j = 1; j < logits.length; j++) {
                        if (logits[j] > logits[best]) {
                            best = j;
                        }
                    }
                    int second = best == 0 ? 1 : 0;
                    for (int j = 0; j < logits.length; j++) {
                        if (j != best && logits[j] > logits[second]) {
                            second = j;
                        }
                    }
                    margins.add(String.format("%d>%d:%.4f", best, second, logits[best] - logits[second]));
                    ids.add(best);
                    int position = prompt.size() + i;
                    tokens[position] = best;
                    if (i < 11) {
                        logits = model.forward(tokens, position, 1, position, cache);
                    }
                }
                System.out.println(file + " prompt " + prompt + " greedy " + ids + " margins " + margins);
            }
        }
    }
}
