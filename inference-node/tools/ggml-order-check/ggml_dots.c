// The llama.cpp side of ggml-order-check.sh: ggml-cpu's own quantize_row_q8_K and ggml_vec_dot_q{4,5,6}_K_q8_K
// (the plain, not repacked, kernels) on the files NodeDots.java writes; prints the bits of each row's dot product.
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
void quantize_row_q8_K(const float * x, void * y, int64_t k);
typedef void (*dotf)(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_q4_K_q8_K(int, float *, size_t, const void *, size_t, const void *, size_t, int);
void ggml_vec_dot_q5_K_q8_K(int, float *, size_t, const void *, size_t, const void *, size_t, int);
void ggml_vec_dot_q6_K_q8_K(int, float *, size_t, const void *, size_t, const void *, size_t, int);
void ggml_cpu_init(void);
int main(int argc, char **argv) {
    ggml_cpu_init();
    const char *types[] = {"Q4_K", "Q5_K", "Q6_K"};
    dotf dots[] = {ggml_vec_dot_q4_K_q8_K, ggml_vec_dot_q5_K_q8_K, ggml_vec_dot_q6_K_q8_K};
    for (int t = 0; t < 3; t++) {
        char path[256]; snprintf(path, sizeof path, "%s/case-%s.bin", argc > 1 ? argv[1] : ".", types[t]);
        FILE *f = fopen(path, "rb"); int h[3]; fread(h, 4, 3, f);
        int n = h[0], rows = h[1], rb = h[2];
        unsigned char *w = malloc((size_t) rb * rows); fread(w, 1, (size_t) rb * rows, f);
        float *x = malloc(4 * n); fread(x, 4, n, f); fclose(f);
        unsigned char *q = malloc(292 * (n / 256));
        quantize_row_q8_K(x, q, n);
        printf("%s", types[t]);
        for (int r = 0; r < rows; r++) { float s; dots[t](n, &s, 0, w + (size_t) r * rb, 0, q, 0, 1); uint32_t b; memcpy(&b, &s, 4); printf(" %x", b); }
        printf("\n");
    }
    return 0;
}
