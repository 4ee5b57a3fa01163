// llama.cpp's side of ggml-parity.sh (run by hand, not in CI): teacher-forced logits, and optionally every named
// tensor of the graph, for given token ids.
//   llama_dump MODEL OUTDIR PROMPT id id ...   the first PROMPT ids are decoded as one batch, then one id per step;
//                                              writes OUTDIR/logits-NN.bin (raw little-endian floats) per step
// Environment: GREEDY=N appends N greedy tokens (end-of-generation tokens banned, as llama-server's ignore_eos) and
// prints them; DUMP_TENSORS=1 writes every F32/F16 tensor the scheduler computes as OUTDIR/tNN-NAME.bin (four int64
// dimensions, then floats; a name seen again in one step gets #1, #2, ...); NO_REPACK=1 is llama-server's --no-repack.
// Context settings are llama-server's defaults for the test: 256 positions, 2 threads, F16 K cache, flash attention auto.
#include "llama.h"
#include "ggml.h"
#include "ggml-backend.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

static std::string outdir;
static int step = 0;
static bool dump_tensors = false;
static std::map<std::string, int> seen;

static bool callback(struct ggml_tensor * t, bool ask, void *) {
    if (ask) {
        return dump_tensors;
    }
    if ((t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16) || !ggml_is_contiguous(t)) {
        return true;
    }
    size_t n = ggml_nelements(t);
    std::vector<char> raw(ggml_nbytes(t));
    ggml_backend_tensor_get(t, raw.data(), 0, raw.size());
    std::vector<float> values(n);
    if (t->type == GGML_TYPE_F32) {
        memcpy(values.data(), raw.data(), n * 4);
    } else {
        for (size_t i = 0; i < n; i++) {
            values[i] = ggml_fp16_to_fp32(((ggml_fp16_t *) raw.data())[i]);
        }
    }
    std::string key = std::to_string(step) + t->name;
    int again = seen[key]++;
    char name[512];
    if (again == 0) {
        snprintf(name, sizeof name, "%s/t%02d-%s.bin", outdir.c_str(), step, t->name);
    } else {
        snprintf(name, sizeof name, "%s/t%02d-%s#%d.bin", outdir.c_str(), step, t->name, again);
    }
    FILE * file = fopen(name, "wb");
    long long dimensions[4] = {t->ne[0], t->ne[1], t->ne[2], t->ne[3]};
    fwrite(dimensions, 8, 4, file);
    fwrite(values.data(), 4, n, file);
    fclose(file);
    return true;
}

int main(int argc, char ** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: llama_dump MODEL OUTDIR PROMPT id id ...\n");
        return 2;
    }
    outdir = argv[2];
    int prompt = atoi(argv[3]);
    dump_tensors = getenv("DUMP_TENSORS") != nullptr;
    int greedy = getenv("GREEDY") ? atoi(getenv("GREEDY")) : 0;
    std::vector<llama_token> ids;
    for (int i = 4; i < argc; i++) {
        ids.push_back(atoi(argv[i]));
    }
    llama_backend_init();
    llama_model_params model_params = llama_model_default_params();
    if (getenv("NO_REPACK")) {
        model_params.use_extra_bufts = false;
    }
    llama_model * model = llama_model_load_from_file(argv[1], model_params);
    if (model == nullptr) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    llama_context_params context_params = llama_context_default_params();
    context_params.n_ctx = 256;
    context_params.n_threads = 2;
    context_params.n_threads_batch = 2;
    context_params.cb_eval = callback;
    llama_context * context = llama_init_from_model(model, context_params);
    const llama_vocab * vocab = llama_model_get_vocab(model);
    int vocabulary = llama_vocab_n_tokens(vocab);
    int position = 0;
    for (step = 0; position < (int) ids.size(); step++) {
        int count = step == 0 ? prompt : 1;
        llama_batch batch = llama_batch_init(count, 0, 1);
        for (int i = 0; i < count; i++) {
            batch.token[i] = ids[position + i];
            batch.pos[i] = position + i;
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = 0;
            batch.logits[i] = i == count - 1;
        }
        batch.n_tokens = count;
        if (llama_decode(context, batch) != 0) {
            fprintf(stderr, "llama_decode failed at step %d\n", step);
            return 1;
        }
        position += count;
        float * logits = llama_get_logits_ith(context, count - 1);
        char name[512];
        snprintf(name, sizeof name, "%s/logits-%02d.bin", outdir.c_str(), step);
        FILE * file = fopen(name, "wb");
        fwrite(logits, 4, vocabulary, file);
        fclose(file);
        llama_batch_free(batch);
        if (greedy > 0 && position == (int) ids.size() && step < greedy) {
            int best = -1;
            for (int j = 0; j < vocabulary; j++) {
                if (!llama_vocab_is_eog(vocab, j) && (best < 0 || logits[j] > logits[best])) {
                    best = j;
                }
            }
            if (step < greedy - 1) {
                ids.push_back(best);
            }
            printf("%d ", best);
        }
    }
    printf("\n");
    llama_free(context);
    llama_model_free(model);
    return 0;
}
